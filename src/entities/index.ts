export * from './built-in.js';
export * from './define-entity.js';
export * from './identifier.js';
