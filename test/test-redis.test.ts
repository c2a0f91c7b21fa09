/**
 * The harness's own Redis servers: a port someone else holds is never mistaken for the server
 * the test started, and the start says why it failed. (CI once
 * failed when a cluster node could not bind its port and the harness only noticed 10 s later.)
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
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

test('a server whose port another process holds fails with the reason from its log', async () => {
  assert.ok(binary, 'redis-server is installed');
  // Not a Redis: PING gets no answer there, so only the server's own exit can end the wait.
  // Its sockets are read so that each one closes when PING gives up on it; unread, they would
  // stay open and hold up holder.close() for ever.
  const holder = createServer((socket) => socket.on('error', () => {}).resume());
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const { port } = holder.address() as AddressInfo;
  try {
    await assert.rejects(startRedisOn({ binary, dir, persistent: false, port }), (error: Error) => {
      assert.match(error.message, new RegExp(`port ${port} exited: .*Address already in use`));
      return true;
    });
  } finally {
    await new Promise((resolve) => holder.close(resolve));
  }
});

test('a server whose port another Redis answers on is never taken for the one started', async () => {
  assert.ok(binary, 'redis-server is installed');
  await assert.rejects(
    startRedisOn({ binary, dir, persistent: false, port: occupant.port }),
    new RegExp(`port ${occupant.port} is taken: another Redis \\(pid \\d+\\) answers there`),
  );
});

test('a cluster node on free ports reserves its port and bus port, and is the server answering there', async () => {
  assert.ok(binary, 'redis-server is installed');
  const avoid = new Set<number>();
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
    assert.deepEqual([...avoid], [started.port, started.port + 10_000]);
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
