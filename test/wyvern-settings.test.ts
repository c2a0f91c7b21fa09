/**
 * Settings as the predecessor's users write them: names in any case, EVENT_LOGGING_ENABLED, its
 * settings rankd does not read named once at start, and the process environment winning over
 * `.env` as a whole (REDIS_PORT in the environment beats REDIS_URL in `.env`).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadConfig, predecessorSettingWarnings, readEnvFiles, redisUrlOf } from '../src/config/index.js';
import { killServices, ROOT, services, waitForHealthcheck, watchService } from './helpers/cli-service.js';
import { freePort } from './helpers/free-port.js';
import { rawClient } from './helpers/ranking-app.js';
import { startTestRedis } from './helpers/redis-server.js';

const dirs: string[] = [];
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'rankd-wyvern-settings-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}
after(() => {
  killServices();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('names without regard to case', () => {
  test('redis_port and project_name set REDIS_PORT and PROJECT_NAME', () => {
    const config = loadConfig({ redis_port: '6391', project_name: 'shop', Redis_Host: 'cache' });
    assert.equal(config.REDIS_PORT, 6391);
    assert.equal(config.PROJECT_NAME, 'shop');
    assert.equal(config.REDIS_HOST, 'cache');
  });

  test('in .env too, and the environment still wins whatever the case', () => {
    const dir = project({ '.env': 'redis_port=7000\nproject_name=from_env_file\n' });
    const config = loadConfig(readEnvFiles(dir, { PROJECT_NAME: 'from_process' }));
    assert.equal(config.REDIS_PORT, 7000);
    assert.equal(config.PROJECT_NAME, 'from_process');
  });

  test('an invalid value is reported under the setting name', () => {
    assert.throws(() => loadConfig({ redis_port: 'many' }), /REDIS_PORT="many": expected a whole number/);
  });
});

describe('EVENT_LOGGING_ENABLED', () => {
  test('false turns event logging off (EVENTS_SINK=off); true leaves the default; an explicit EVENTS_SINK wins', () => {
    assert.equal(loadConfig({ EVENT_LOGGING_ENABLED: 'false' }).EVENTS_SINK, 'off');
    assert.equal(loadConfig({ event_logging_enabled: 'False' }).EVENTS_SINK, 'off');
    assert.equal(loadConfig({ EVENT_LOGGING_ENABLED: 'true' }).EVENTS_SINK, 'redis');
    assert.equal(loadConfig({ EVENT_LOGGING_ENABLED: 'false', EVENTS_SINK: 'file' }).EVENTS_SINK, 'file');
  });

  test('the environment beats an EVENTS_SINK in .env', () => {
    const dir = project({ '.env': 'EVENTS_SINK=redis\n' });
    assert.equal(loadConfig(readEnvFiles(dir, { EVENT_LOGGING_ENABLED: 'false' })).EVENTS_SINK, 'off');
  });

  test('a value that is not a boolean is refused', () => {
    assert.throws(() => loadConfig({ EVENT_LOGGING_ENABLED: 'maybe' }), /EVENT_LOGGING_ENABLED="maybe"/);
  });
});

describe("the predecessor's settings rankd does not read", () => {
  test('each is named with what to use instead; settings rankd reads or maps are not', () => {
    const lines = predecessorSettingWarnings({ snowflake_user: 'me', SERVER_TIMEOUT: '60', REDIS_PORT: '1' });
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.match(lines.find((l) => l.includes('SNOWFLAKE_USER')) ?? '', /rankd events export/);
    assert.match(lines.find((l) => l.includes('SERVER_TIMEOUT')) ?? '', /KEEP_ALIVE_TIMEOUT_MS/);
    assert.deepEqual(
      predecessorSettingWarnings({
        WYVERN_INDEX_VERSION: '2',
        EVENT_LOGGING_ENABLED: 'false',
        PROJECT_NAME: 'x',
      }),
      [],
    );
  });
});

describe('the process environment wins over .env as a whole', () => {
  test('REDIS_PORT in the environment drops REDIS_URL from .env; REDIS_URL in the environment still wins', () => {
    const dir = project({ '.env': 'REDIS_URL=redis://localhost:6379\n' });
    assert.equal(redisUrlOf(loadConfig(readEnvFiles(dir, { REDIS_PORT: '6391' }))), 'redis://localhost:6391');
    const other = project({ '.env': 'REDIS_HOST=a\nREDIS_PORT=1\n' });
    assert.equal(redisUrlOf(loadConfig(readEnvFiles(other, { REDIS_URL: 'redis://b:2' }))), 'redis://b:2');
  });

  test('.env.prod against .env follows the same rule', () => {
    const dir = project({ '.env': 'REDIS_URL=redis://a:1\n', '.env.prod': 'REDIS_HOST=b\n' });
    assert.equal(redisUrlOf(loadConfig(readEnvFiles(dir, {}))), 'redis://b:6379');
  });

  test('INDEX_VERSION from .env does not beat WYVERN_INDEX_VERSION from the environment', () => {
    const dir = project({ '.env': 'INDEX_VERSION=1\n' });
    assert.equal(loadConfig(readEnvFiles(dir, { WYVERN_INDEX_VERSION: '7' })).INDEX_VERSION, '7');
  });
});

describe('rankd run in a project whose .env has REDIS_URL, with REDIS_PORT in the environment', () => {
  test('connects to REDIS_PORT, and names a Wyvern-only setting of .env once', async () => {
    const redis = await startTestRedis();
    try {
      const unused = await freePort();
      const dir = project({
        '.env': `ENVIRONMENT=development\nREDIS_URL=redis://127.0.0.1:${unused}\nsnowflake_user=analyst\n`,
      });
      const env: Record<string, string> = {};
      for (const [name, value] of Object.entries(process.env))
        if (value !== undefined && !/^redis_/i.test(name)) env[name] = value;
      const port = await freePort();
      const tsx = import.meta.resolve('tsx');
      const child = spawn(
        process.execPath,
        [
          '--import',
          tsx,
          join(ROOT, 'src/cli/main.ts'),
          'run',
          '--app',
          join(ROOT, 'template/pipelines/main.ts'),
          '--port',
          String(port),
          '--host',
          '127.0.0.1',
        ],
        {
          cwd: dir,
          env: {
            ...env,
            LOG_LEVEL: 'warn',
            REDIS_HOST: '127.0.0.1',
            REDIS_PORT: String(redis.port),
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const service = watchService(child, `http://127.0.0.1:${port}`);
      services.add(service);
      await waitForHealthcheck(service);
      const upload = await fetch(`${service.base}/api/v1/entities/upload`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ entity_type: 'product', entities: [{ product_id: 'env-wins' }] }),
      });
      assert.equal(upload.status, 200, await upload.text());
      const client = await rawClient(redis);
      try {
        assert.equal(await client.exists('default:1:product:env-wins'), 1);
      } finally {
        await client.quit();
      }
      const warnings = service
        .output()
        .split('\n')
        .filter((line) => line.includes('SNOWFLAKE_USER'));
      assert.equal(warnings.length, 1, service.output());
      assert.match(warnings[0] ?? '', /setting of Wyvern that rankd does not read/);
      child.kill('SIGTERM');
      await service.exited;
    } finally {
      await redis.stop();
    }
  });
});
