/**
 * Graceful close of a listening server (startServer + ConnectionDrain): a request in flight
 * finishes with 200 and `Connection: close`; a keep-alive connection that sends again during the
 * drain is answered (not reset, not 503) and told to close; idle connections are closed; then
 * the server's onClose hooks run and no new connection is accepted.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { Client } from 'undici';
import { startServer } from '../src/http/start-server.js';

test('close() drains: in-flight and keep-alive requests are answered with Connection: close', async () => {
  const server = Fastify({ logger: false, forceCloseConnections: 'idle' });
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let slowStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => {
    slowStarted = resolve;
  });
  server.get('/slow', async () => {
    slowStarted();
    await held;
    return { slow: true };
  });
  server.get('/fast', async () => ({ fast: true }));
  let onCloseRan = false;
  server.addHook('onClose', async () => {
    onCloseRan = true;
  });
  const running = await startServer(server, { port: 0, host: '127.0.0.1', shutdownTimeoutMs: 10_000 });
  const origin = `http://127.0.0.1:${running.port}`;
  // Two keep-alive connections: one busy with /slow, one that answered /fast and sits idle.
  const busy = new Client(origin);
  const idle = new Client(origin);
  try {
    const first = await idle.request({ method: 'GET', path: '/fast' });
    assert.equal(first.headers.connection, 'keep-alive');
    await first.body.json();
    const slow = busy.request({ method: 'GET', path: '/slow' });
    await started;

    const closed = running.close();
    // The idle connection sends again right away, as a busy client would: answered, told to close.
    const during = await idle.request({ method: 'GET', path: '/fast' });
    assert.equal(during.statusCode, 200);
    assert.equal(during.headers.connection, 'close');
    assert.deepEqual(await during.body.json(), { fast: true });

    release();
    const slowAnswer = await slow;
    assert.equal(slowAnswer.statusCode, 200);
    assert.equal(slowAnswer.headers.connection, 'close');
    assert.deepEqual(await slowAnswer.body.json(), { slow: true });

    await closed;
    assert.ok(onCloseRan, 'onClose hooks ran');
    await assert.rejects(fetch(`${origin}/fast`), 'no new connection after close');
  } finally {
    await Promise.all([busy.close(), idle.close()]);
  }
});

test('close() cuts what is still running at the deadline, and says how many', async () => {
  const server = Fastify({ logger: false });
  let arrived: () => void = () => undefined;
  const inFlight = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  server.get('/forever', () => {
    arrived();
    return new Promise(() => undefined);
  });
  let cut = -1;
  const running = await startServer(server, {
    port: 0,
    host: '127.0.0.1',
    shutdownTimeoutMs: 200,
    onCut: (requests) => {
      cut = requests;
    },
  });
  const client = new Client(`http://127.0.0.1:${running.port}`);
  const hanging = client.request({ method: 'GET', path: '/forever' }).then(
    () => 'answered',
    () => 'cut',
  );
  await inFlight;
  await running.close();
  assert.equal(await hanging, 'cut');
  assert.equal(cut, 1);
  await client.close().catch(() => undefined);
});
