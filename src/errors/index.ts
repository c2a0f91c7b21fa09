export * from './catalogue.js';
export * from './rankd-error.js';
export * from './redis-address.js';
export * from './schema-problems.js';
