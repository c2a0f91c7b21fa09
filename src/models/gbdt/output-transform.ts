import type { OutputTransform } from './tree-source.js';

/** Applies `transform` to `margins[0..rows)` in place. */
export function applyTransform(transform: OutputTransform, margins: Float64Array, rows: number): void {
  switch (transform.kind) {
    case 'identity':
      return;
    case 'sigmoid': {
      const scale = transform.scale;
      for (let i = 0; i < rows; i++) margins[i] = 1 / (1 + Math.exp(-scale * (margins[i] as number)));
      return;
    }
    case 'exp':
      for (let i = 0; i < rows; i++) margins[i] = Math.exp(margins[i] as number);
      return;
    case 'signed-square':
      for (let i = 0; i < rows; i++) {
        const m = margins[i] as number;
        margins[i] = Math.sign(m) * m * m;
      }
      return;
  }
}
