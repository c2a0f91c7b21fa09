"""Trains a ranking model on `rankd events export` CSV and saves it for rankd's gbdtModel."""
import csv
import sys

import numpy as np
import xgboost as xgb

FEATURES = [  # the model's inputs, in the order gbdtModel's `features` lists them
    "text_match:title",
    "text_match:description",
    "product_stats:ctr_7d",
    "product_stats:popularity",
]

source, target = sys.argv[1], sys.argv[2]
with open(source, newline="") as file:
    # Rows come grouped by request, in page order; rows without features were not sampled.
    rows = [row for row in csv.DictReader(file) if row[FEATURES[0]] != ""]

rows_by_request = {}
for row in rows:
    rows_by_request.setdefault(row["request_id"], []).append(row)
ordered = [row for request in rows_by_request.values() for row in request]
groups = [len(request) for request in rows_by_request.values()]

x = np.array([[float(row[f]) if row[f] != "" else np.nan for f in FEATURES] for row in ordered])
y = np.array([int(row["label"]) for row in ordered])
data = xgb.DMatrix(x, label=y, feature_names=[f.replace(":", "_") for f in FEATURES])
data.set_group(groups)

booster = xgb.train(
    {"objective": "rank:ndcg", "eta": 0.1, "max_depth": 4, "min_child_weight": 1},
    data,
    num_boost_round=50,
)
booster.save_model(target)  # XGBoost JSON: gbdtModel reads it
print(f"trained on {len(ordered)} rows of {len(groups)} requests; wrote {target}")
