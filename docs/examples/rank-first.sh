curl -s localhost:5001/api/v1/ranking -H 'Content-Type: application/json' -d '{
  "request_id": "r1",
  "query": {"query": "candle"},
  "user": {"user_id": "u1"},
  "candidates": [{"product_id": "p1"}, {"product_id": "p6"}, {"product_id": "p12"},
                 {"product_id": "p18"}, {"product_id": "p23"}, {"product_id": "p35"}],
  "user_page_size": 4, "user_page": 0, "candidate_page_size": 6, "candidate_page": 0}'
