/**
 * The harness's own Redis servers: a port someone else holds is never mistaken for the server
 * the test started, the start says why it failed, and a fresh port is found instead. (CI once
 * failed when a cluster node could not bind its port and the harness only noticed 10 s later.)
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createClient } from 'redis';
import { findRedisServer } from '../src/redis/local-server.js';
import { startRedisOn, startRedisOnFreePorts } from './helpers/redis-child.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';

let occupant: TestRedis;
let dir: string;
const binary = findRedisServer();

before(async () => {
  occupant = await startTestRedis();
  dir = mkdtempSync(join(tmpdir(), 'rankd-test-harness-'));
});

after(async () => {
  await occupant?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a server whose port another Redis holds fails with the reason from its log, not as a success', async () => {
  assert.ok(binary, 'redis-server is installed');
  await assert.rejects(
    startRedisOn({ binary, dir, persistent: false, port: occupant.port }),
    (error: Error) => {
      assert.match(error.message, new RegExp(`port ${occupant.port} exited`));
      assert.match(error.message, /Address already in use/);
      return true;
    },
  );
});

test('a cluster node on free ports skips the ports it is told to avoid and serves on its own', async () => {
  assert.ok(binary, 'redis-server is installed');
  const avoid = new Set([occupant.port]);
  const started = await startRedisOnFreePorts({
    binary,
    dir,
    persistent: false,
    cluster: true,
    avoid,
    extraArgs: (port) => [
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      join(dir, `nodes-${port}.conf`),
    ],
  });
  try {
    assert.notEqual(started.port, occupant.port);
    assert.ok(avoid.has(started.port), 'its port is added to the ports to avoid');
    assert.ok(avoid.has(started.port + 10_000), "a cluster node's bus port is too");
    const client = createClient({ url: `redis://127.0.0.1:${started.port}` });
    await client.connect();
    const [server, cluster] = [await client.info('server'), await client.info('cluster')];
    await client.close();
    assert.match(server, new RegExp(`process_id:${started.child.pid}\\b`));
    assert.match(cluster, /cluster_enabled:1/);
  } finally {
    started.child.kill('SIGKILL');
  }
});
