export { redisAddressForResponse, redisReasonForResponse } from './addresses.js';
export * from './catalogue.js';
export * from './rankd-error.js';
export * from './schema-problems.js';
