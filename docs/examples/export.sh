npx rankd events export --since 7d --out train.csv
