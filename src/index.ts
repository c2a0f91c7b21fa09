/**
 * rankd's public API: what app modules import.
 * @module
 */
export { type AppOptions, defineApp, isRankdApp, type RankdApp } from './app/define-app.js';
export { type Config, loadConfig } from './config/index.js';
export * from './entities/index.js';
export * from './errors/index.js';
export { type BuildServerOptions, buildServer } from './http/build-server.js';
export { VERSION } from './version.js';
