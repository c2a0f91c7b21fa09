/**
 * Ready-made business-logic steps: boost, pin, filter, dedupe, diversity. See docs/reference/business-logic.md.
 * @module
 */
export { type BoostOptions, boost } from './boost.js';
export { type DedupeOptions, dedupe } from './dedupe.js';
export { type DiversityOptions, diversity } from './diversity.js';
export { type FilterOptions, filter } from './filter.js';
export type { KeyBy, StepKey } from './keys.js';
export { type PinOptions, type PinPositions, pin } from './pin.js';
export type { StepOptions } from './step-options.js';
