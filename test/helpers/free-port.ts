/** Free loopback ports for tests: the code `rankd/testing` uses too (src/redis/free-port-server.ts). */
export { freePort, portIsFree } from '../../src/redis/free-port-server.js';
