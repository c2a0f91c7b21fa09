curl -s localhost:5001/healthcheck
