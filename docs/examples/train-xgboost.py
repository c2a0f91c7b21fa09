"""Trains a ranking model on `rankd events export` CSV and saves it for the template's Ranker."""
import csv
import sys

import numpy as np
import xgboost as xgb

FEATURES = [  # Ranker's inputs (INPUTS in pipelines/product-ranking/models.ts), in their order
    "text_match:title",
    "text_match:category",
    "text_match:description",
    "text_match:brand",
    "realtime_product:search_score",
    "product_stats:popularity",
    "product_stats:ctr_7d",
    "product_sales:conversion_30d",
    "user_affinity:embedding_similarity",
    "user_affinity:preferred_brand",
    "user_affinity:price_penalty",
    "product_stats:purchase_past_15_days",
    "product_stats:rating",
    "product_stats:review_count",
]

source, target = sys.argv[1], sys.argv[2]
with open(source, newline="") as file:
    # Rows come grouped by request, in page order; an empty cell is a missing value.
    rows = list(csv.DictReader(file))

rows_by_request = {}
for row in rows:
    rows_by_request.setdefault(row["request_id"], []).append(row)
ordered = [row for request in rows_by_request.values() for row in request]
groups = [len(request) for request in rows_by_request.values()]

x = np.array([[float(row.get(f) or "nan") for f in FEATURES] for row in ordered])
y = np.array([int(row["label"]) for row in ordered])
data = xgb.DMatrix(x, label=y, feature_names=[f.replace(":", "_") for f in FEATURES])
data.set_group(groups)

booster = xgb.train(
    {"objective": "rank:ndcg", "eta": 0.1, "max_depth": 4, "min_child_weight": 1},
    data,
    num_boost_round=50,
)
# XGBoost JSON, whatever the file is called: save_model would pick a binary format for a name
# that does not end in .json, such as the temporary one of step 5.
with open(target, "wb") as out:
    out.write(booster.save_raw("json"))
print(f"trained on {len(ordered)} rows of {len(groups)} requests; wrote {target}")
