/**
 * `npm test`'s pretest step, beside ensure-chromium.ts: makes sure Debian's python3 has XGBoost,
 * with apt-get (sudo when not root) where it is missing. Tests that check rankd against XGBoost
 * itself use it: the model guide's training script (test/docs-examples.test.ts) and the trainer's
 * files loaded in XGBoost (test/training-xgboost.test.ts). Without it those tests skip and say
 * why, so a failed install only warns: the rest of the suite does not need it.
 */
import { spawnSync } from 'node:child_process';
import { aptInstall } from './apt-install.js';

const PYTHON = '/usr/bin/python3';

function hasXgboost(): boolean {
  return spawnSync(PYTHON, ['-c', 'import numpy, xgboost'], { stdio: 'ignore' }).status === 0;
}

if (!hasXgboost() && !(aptInstall('ensure-python-xgboost', ['python3-xgboost']) && hasXgboost())) {
  console.warn(
    `ensure-python-xgboost: ${PYTHON} cannot import xgboost and apt-get could not install it ` +
      '(Debian: apt-get install python3-xgboost). The tests that compare with XGBoost itself will skip.',
  );
}
