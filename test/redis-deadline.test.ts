/**
 * The connection's deadline: on a single Redis it is the only command timeout (one timer for all
 * commands, not node-redis's AbortSignal per command), so a Redis that stops answering must still
 * fail every operation with a timeout, and the connection must work again once Redis answers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient, TimeoutError } from 'redis';
import { RedisUnavailableError } from '../src/errors/index.js';
import { RedisConnection, type RedisConnectionOptions } from '../src/redis/connection.js';
import { Deadlines } from '../src/redis/deadlines.js';
import { sleep } from './helpers/ranking-app.js';
import { startTestCluster } from './helpers/redis-cluster.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';

describe('Deadlines', () => {
  test('passes values and errors through; fails what never settles with a TimeoutError', async () => {
    const deadlines = new Deadlines(30);
    assert.equal(await deadlines.within(Promise.resolve(7)), 7);
    await assert.rejects(deadlines.within(Promise.reject(new Error('boom'))), /boom/);
    await assert.rejects(deadlines.within(new Promise(() => undefined)), (error: unknown) => {
      assert.ok(error instanceof TimeoutError);
      assert.match(error.message, /no answer within 30 ms/);
      return true;
    });
  });

  test('operations expire in the order they started; one that settles in time is not failed', async () => {
    const deadlines = new Deadlines(40);
    const outcomes: string[] = [];
    const track = (name: string, operation: Promise<unknown>) =>
      deadlines.within(operation).then(
        () => outcomes.push(`${name} ok`),
        () => outcomes.push(`${name} timeout`),
      );
    let finish: (value: unknown) => void = () => undefined;
    const all = [
      track('hung-1', new Promise(() => undefined)),
      track('quick', new Promise((resolve) => (finish = resolve))),
      track('hung-2', new Promise(() => undefined)),
    ];
    finish(undefined);
    await Promise.all(all);
    assert.deepEqual(outcomes, ['quick ok', 'hung-1 timeout', 'hung-2 timeout']);
  });

  test('operations settling out of order, first, last or between others, leave the rest watched', async () => {
    const deadlines = new Deadlines(40);
    const outcomes: string[] = [];
    const finishers = new Map<string, (value: unknown) => void>();
    const track = (name: string) =>
      deadlines.within(new Promise((resolve) => finishers.set(name, resolve))).then(
        () => outcomes.push(`${name} ok`),
        () => outcomes.push(`${name} timeout`),
      );
    const all = ['a', 'b', 'c', 'd', 'e', 'f'].map(track);
    // Between others, then the newest, then the oldest: each a different place in the list.
    for (const name of ['c', 'f', 'a']) finishers.get(name)?.(undefined);
    await Promise.all(all);
    assert.deepEqual(outcomes, ['c ok', 'f ok', 'a ok', 'b timeout', 'd timeout', 'e timeout']);
  });

  test('an operation that settles after it timed out leaves the others watched', {
    timeout: 10_000,
  }, async () => {
    const deadlines = new Deadlines(20);
    let finishLate: (value: unknown) => void = () => undefined;
    await assert.rejects(deadlines.within(new Promise((resolve) => (finishLate = resolve))), TimeoutError);
    const earlier = deadlines.within(new Promise(() => undefined));
    finishLate(undefined);
    await new Promise((resolve) => setImmediate(resolve));
    const later = deadlines.within(new Promise(() => undefined));
    await assert.rejects(earlier, TimeoutError);
    await assert.rejects(later, TimeoutError);
  });

  test('once every operation has settled, in any order, no timer is left', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    const deadlines = new Deadlines(60_000);
    const finishers: Array<(value: unknown) => void> = [];
    const all = Array.from({ length: 5 }, () =>
      deadlines.within(new Promise((resolve) => finishers.push(resolve))),
    );
    assert.equal(timers(), before + 1, 'one timer watches them all');
    for (const i of [2, 4, 0, 3, 1]) finishers[i]?.(i);
    assert.deepEqual(await Promise.all(all), [0, 1, 2, 3, 4]);
    assert.equal(timers(), before);
  });

  test('an operation that fails after its deadline is not an unhandled rejection', async () => {
    const deadlines = new Deadlines(10);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const late = new Promise((_resolve, reject) => setTimeout(() => reject(new Error('late')), 60));
      await assert.rejects(deadlines.within(late), TimeoutError);
      await sleep(100);
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('a Redis that stops answering', () => {
  let redis: TestRedis;
  let connection: RedisConnection;
  let admin: ReturnType<typeof createClient>;

  before(async () => {
    redis = await startTestRedis();
    connection = new RedisConnection({ url: redis.url, connectTimeoutMs: 500, commandTimeoutMs: 200 });
    assert.ok(await connection.waitUntilReady(5000));
    admin = createClient({ url: redis.url });
    admin.on('error', () => undefined);
    await admin.connect();
  });

  after(async () => {
    await connection?.close();
    await admin?.quit();
    await redis?.stop();
  });

  test('reads fail with a timeout while it is paused, and work again after', async () => {
    await connection.mset([['k', 'v']]);
    // CLIENT PAUSE holds every client's commands (the pausing client's own included) for 1.5 s.
    await admin.sendCommand(['CLIENT', 'PAUSE', '1500', 'ALL']);
    await assert.rejects(connection.mget(['k']), (error: unknown) => {
      assert.ok(error instanceof RedisUnavailableError);
      assert.ok(error.cause instanceof TimeoutError, `cause: ${String(error.cause)}`);
      return true;
    });
    await assert.rejects(connection.deleteEach(['k']), RedisUnavailableError);
    // Once the pause is over the same connection answers again (the delete above was abandoned
    // by rankd, not by Redis: it runs when the pause ends).
    let values: unknown[] | undefined;
    for (let attempt = 0; attempt < 50 && values === undefined; attempt++) {
      try {
        values = await connection.mget(['k']);
      } catch {
        await sleep(100);
      }
    }
    assert.deepEqual(values, [null]);
  });
});

/**
 * How many `AbortSignal.timeout`s some writes and reads make through a connection with `options`
 * (node-redis makes one per command unless told not to).
 */
async function abortSignalsMadeThrough(options: RedisConnectionOptions): Promise<number> {
  const connection = new RedisConnection(options);
  const original = AbortSignal.timeout;
  let made = 0;
  try {
    assert.ok(await connection.waitUntilReady(10_000));
    AbortSignal.timeout = (ms: number) => {
      made++;
      return original.call(AbortSignal, ms);
    };
    await connection.mset([
      ['a', '1'],
      ['b', '2'],
    ]);
    for (let i = 0; i < 20; i++) await connection.mget(['a', 'b']);
  } finally {
    AbortSignal.timeout = original;
    await connection.close();
  }
  return made;
}

// node-redis 6 gives every command a 5 s AbortSignal.timeout (a timer and two listener calls, kept
// alive with the command until it fires) unless told otherwise; the connection's one deadline
// timer replaces them all, on a single Redis and on a cluster.
describe('commands make no timer each', () => {
  const timeouts = { connectTimeoutMs: 500, commandTimeoutMs: 5000 };

  test('on a single Redis', async () => {
    const redis = await startTestRedis();
    try {
      assert.equal(await abortSignalsMadeThrough({ url: redis.url, ...timeouts }), 0);
    } finally {
      await redis.stop();
    }
  });

  test('on a Redis Cluster', async () => {
    const cluster = await startTestCluster();
    try {
      assert.equal(
        await abortSignalsMadeThrough({ url: '', clusterNodes: cluster.nodes.split(','), ...timeouts }),
        0,
      );
    } finally {
      await cluster.stop();
    }
  });
});
