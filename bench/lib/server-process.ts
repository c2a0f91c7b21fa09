import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RUNTIME_NODE_FLAGS } from '../../src/cli/runtime-flags.js';
import type { ServeMessage } from './serve-child.js';

/** A rankd server running in its own process. */
export interface ServerProcess {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly pid: number;
  /** CPU time (user + system, ms) the server process has used so far. */
  cpuMs(): Promise<number>;
  /** Asks it to close and exit normally (so a CPU profile gets written); kills it after 10 s. */
  stop(): Promise<void>;
}

/** How to start the server child. */
export interface ServerProcessOptions {
  /** Redis the server uses. */
  redisUrl: string;
  /** Extra configuration (rankd environment variables), e.g. `{ INDEX_CODEC: 'lz4' }`. */
  env?: Record<string, string>;
  /** App module path, when the benchmark needs more than the built-in entity types. */
  appModule?: string;
  /** Write a V8 CPU profile of the server (`.cpuprofile`) into this directory when it stops. */
  cpuProfDir?: string;
  /**
   * The child's entry module, when not `bench/lib/serve.ts`. It must speak serve-child.ts's IPC
   * protocol ({@link ServeMessage}; answer `cpu`, exit on `stop`): `runServeChild` does.
   */
  entry?: string;
  /** Node flags after {@link serverNodeArgs}'s (a later flag wins), for one server of several. */
  extraNodeArgs?: readonly string[];
}

const SERVE_ENTRY = fileURLToPath(new URL('./serve.ts', import.meta.url));

/**
 * Starts `node --import tsx bench/lib/serve.ts` and resolves once it listens. A separate process
 * is what production looks like: the server's event loop and garbage collector do not share a
 * thread with the load generator, and a profile of it shows only server work.
 */
export async function startServerProcess(options: ServerProcessOptions): Promise<ServerProcess> {
  const execArgv = ['--import', 'tsx', ...serverNodeArgs(), ...(options.extraNodeArgs ?? [])];
  if (options.cpuProfDir) execArgv.push('--cpu-prof', '--cpu-prof-dir', options.cpuProfDir);
  const child = fork(options.entry ?? SERVE_ENTRY, [], {
    execArgv,
    env: {
      ...process.env,
      REDIS_URL: options.redisUrl,
      LOG_LEVEL: 'silent',
      API_KEYS: '',
      ADMIN_API_KEYS: '',
      BENCH_APP: options.appModule ?? '',
      ...options.env,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const port = await waitForListening(child);
  return {
    origin: `http://127.0.0.1:${port}`,
    pid: child.pid as number,
    cpuMs: () =>
      new Promise((resolve, reject) => {
        const onMessage = (message: ServeMessage) => {
          if (message.kind !== 'cpu') return;
          child.off('message', onMessage);
          resolve(message.ms);
        };
        child.on('message', onMessage);
        child.send('cpu', (error) => error && reject(error));
      }),
    async stop() {
      process.off('exit', killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      // A child that crashed may have closed its channel before its exit is seen: a send without
      // a callback would then throw out of the benchmark (an 'error' event) and skip its clean-up.
      if (child.connected) child.send('stop', (error) => error && child.kill('SIGKILL'));
      else child.kill('SIGKILL');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Node flags for the server child: the ones `rankd` runs with ({@link RUNTIME_NODE_FLAGS}), then
 * any from `BENCH_SERVER_NODE_ARGS` (space-separated), to try runtime settings without touching
 * code; a flag given twice takes the later value (`--max-semi-space-size=16` measures the default).
 */
export function serverNodeArgs(): string[] {
  return [...RUNTIME_NODE_FLAGS, ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)];
}

function waitForListening(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the server child did not listen within 120 s'));
    }, 120_000);
    child.on('message', (message: ServeMessage) => {
      if (message.kind === 'cpu') return;
      clearTimeout(timer);
      if (message.kind === 'listening') resolve(message.port);
      else reject(new Error(`the server child failed to start: ${message.reason}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the server child exited before listening (code ${code}, signal ${signal})`));
    });
  });
}
