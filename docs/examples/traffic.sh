# 24 searches over the whole sample catalogue, each with a click and a purchase.
candidates=$(for i in $(seq 60); do printf '{"product_id": "p%s"},' "$i"; done)
for round in 1 2 3; do
  for search in candle:u1:p7 candle:u2:p4 mug:u2:p50 vase:u3:p48 lamp:u4:p44 throw:u1:p19 \
                linen:u3:p20 blanket:u4:p43; do
    query=${search%%:*}; user=${search#*:}; user=${user%%:*}; bought=${search##*:}
    id="$query-$user-$round-$$"
    curl -s localhost:5001/api/v1/ranking -H 'Content-Type: application/json' -d '{
      "request_id": "'"$id"'", "query": {"query": "'"$query"'"}, "user": {"user_id": "'"$user"'"},
      "candidates": ['"${candidates%,}"'], "user_page_size": 12}' > /dev/null
    curl -s localhost:5001/api/v1/events/feedback -H 'Content-Type: application/json' -d '{
      "events": [{"request_id": "'"$id"'", "entity_id": "'"$bought"'", "feedback_type": "click"},
                 {"request_id": "'"$id"'", "entity_id": "'"$bought"'", "feedback_type": "purchase"}]}' > /dev/null
  done
done
