/**
 * Worse models made from a trained one, to try the promotion gate both ways: the same trees with
 * their leaves negated (it ranks backwards: much worse), and the trees plus a copy of them with
 * each tree's leaves shuffled (half its signal replaced by noise: somewhat worse). They edit the
 * XGBoost JSON file `rankd train` writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { seededRandom } from '../../src/training/random.js';

interface TreeJson {
  id: number;
  left_children: number[];
  split_conditions: number[];
  base_weights: number[];
}

interface ModelJson {
  learner: {
    gradient_booster: {
      model: { trees: TreeJson[]; tree_info: number[]; gbtree_model_param: { num_trees: string } };
    };
  };
}

function read(path: string): ModelJson {
  return JSON.parse(readFileSync(path, 'utf8')) as ModelJson;
}

function leaves(tree: TreeJson): number[] {
  return tree.left_children.flatMap((left, node) => (left === -1 ? [node] : []));
}

/** The model of `from` with every leaf value negated, written to `to`. */
export function negateLeaves(from: string, to: string): void {
  const model = read(from);
  for (const tree of model.learner.gradient_booster.model.trees)
    for (const node of leaves(tree)) {
      tree.split_conditions[node] = -(tree.split_conditions[node] as number);
      tree.base_weights[node] = -(tree.base_weights[node] as number);
    }
  writeFileSync(to, JSON.stringify(model));
}

/**
 * The model of `from` plus, for each tree, a copy whose leaf values are shuffled among its leaves
 * (seeded), written to `to`: the same scale of scores, half of it noise.
 */
export function addShuffledTrees(from: string, to: string, seed: number): void {
  const model = read(from);
  const booster = model.learner.gradient_booster.model;
  const random = seededRandom(seed);
  const copies = booster.trees.map((tree) => {
    const copy = structuredClone(tree);
    const nodes = leaves(copy);
    const values = nodes.map((node) => copy.split_conditions[node] as number);
    for (let i = values.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [values[i], values[j]] = [values[j] as number, values[i] as number];
    }
    nodes.forEach((node, i) => {
      copy.split_conditions[node] = values[i] as number;
      copy.base_weights[node] = values[i] as number;
    });
    return copy;
  });
  booster.trees = [...booster.trees, ...copies].map((tree, id) => ({ ...tree, id }));
  booster.tree_info = booster.trees.map(() => 0);
  booster.gbtree_model_param.num_trees = String(booster.trees.length);
  writeFileSync(to, JSON.stringify(model));
}
