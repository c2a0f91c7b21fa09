curl -s localhost:5001/api/v1/entities/upload -H 'Content-Type: application/json' \
  -d '{"entity_type": "product", "entities": [{"product_id": "x1", "brand": "acme", "price": null}]}'
curl -s localhost:5001/api/v1/entities/get -H 'Content-Type: application/json' \
  -d '{"entity_type": "product", "entity_ids": ["x1", "nope"]}'
curl -s localhost:5001/api/entity/v1/entities/delete -H 'Content-Type: application/json' \
  -d '{"entity_type": "product", "entity_ids": ["x1"]}'
