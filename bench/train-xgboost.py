"""XGBoost's side of `npm run bench -- train` (run with Debian's /usr/bin/python3 and python3-xgboost).

Reads the data set bench/train.ts wrote into DIR (float32 matrices, uint32 group sizes, meta.json),
then for each `--runs` round trains XGBoost's rank:ndcg with tree_method=hist on one thread and
times xgb.train alone. Writes the last model's validation margins, and the validation margins of
the model file rankd wrote (loaded with xgb.Booster(model_file=...)), as float32 files, and prints
one JSON line: the training times, the version, the validation NDCG@k XGBoost reported per round.
"""
import json
import sys
import time

import numpy as np
import xgboost as xgb


def load(directory, name, names):
    values = np.fromfile(f"{directory}/{name}-values.f32", dtype=np.float32).reshape(-1, len(names))
    labels = np.fromfile(f"{directory}/{name}-labels.f32", dtype=np.float32)
    groups = np.fromfile(f"{directory}/{name}-groups.u32", dtype=np.uint32)
    matrix = xgb.DMatrix(values, label=labels, missing=np.nan, feature_names=names)
    matrix.set_group(groups)
    return matrix, values


def main():
    directory, mode = sys.argv[1], sys.argv[2]
    with open(f"{directory}/meta.json") as file:
        meta = json.load(file)
    features = meta["feature_names"]
    valid, valid_values = load(directory, "valid", features)
    out = {"version": xgb.__version__}
    if mode == "train":
        train, _ = load(directory, "train", features)
        params = {
            "objective": "rank:ndcg",
            "tree_method": "hist",
            "nthread": 1,
            "eta": meta["eta"],
            "max_depth": meta["max_depth"],
            "lambda": meta["lambda"],
            "max_bin": meta["max_bin"],
            "eval_metric": f"ndcg@{meta['k']}",
            "seed": 0,
        }
        history = {}
        started = time.perf_counter()
        booster = xgb.train(params, train, meta["trees"], evals=[(valid, "valid")], evals_result=history, verbose_eval=False)
        out["seconds"] = time.perf_counter() - started
        out["reported_ndcg"] = history["valid"][f"ndcg@{meta['k']}"]
        booster.predict(valid, output_margin=True).astype(np.float32).tofile(f"{directory}/xgboost-valid.f32")
    elif mode == "load":
        booster = xgb.Booster(model_file=f"{directory}/rankd-model.json")
        # Predicted from a DMatrix of the same float32 values, as a server scoring them would.
        booster.predict(xgb.DMatrix(valid_values, missing=np.nan, feature_names=features), output_margin=True).astype(np.float32).tofile(
            f"{directory}/rankd-in-xgboost-valid.f32"
        )
    print(json.dumps(out))


main()
