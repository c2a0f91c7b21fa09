mkdir -p models && python3 train-xgboost.py train.csv models/ranker.json
