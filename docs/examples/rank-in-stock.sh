curl -s localhost:5001/api/v1/ranking -H 'Content-Type: application/json' -d '{
  "request_id": "r2",
  "query": {"query": "candle"},
  "user": {"user_id": "u1"},
  "in_stock_only": true,
  "candidates": [{"product_id": "p1"}, {"product_id": "p6"}, {"product_id": "p12"},
                 {"product_id": "p18"}, {"product_id": "p23"}, {"product_id": "p35"}],
  "user_page_size": 4}'
