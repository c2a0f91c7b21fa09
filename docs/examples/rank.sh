curl -s localhost:5001/api/v1/ranking -H 'Content-Type: application/json' -d '{
  "request_id": "r1", "query": {"query": "candle"},
  "candidates": [{"product_id": "p1"}, {"product_id": "p2"}, {"product_id": "p3"}],
  "user_page_size": 2, "user_page": 0, "candidate_page_size": 3, "candidate_page": 0}'
