/**
 * `rankd/testing`: what a project's tests import. An app served in process on a throwaway Redis,
 * with fixtures loaded (see {@link testApp}).
 * @module
 */
export { type TestApp, type TestAppOptions, testApp } from './test-app.js';
