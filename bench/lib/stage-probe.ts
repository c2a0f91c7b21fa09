/**
 * The server side of `npm run bench -- rank-profile`: where a server's CPU goes during a request,
 * segment by segment. A segment runs from one mark to the next: the HTTP server's `request`
 * event, Fastify's hooks (`preParsing`, `preValidation`, `preHandler`, `preSerialization`,
 * `onSend`, `onResponse`) and, in rankd, the end of each pipeline stage
 * (`RequestContext.stageEnded`). At each mark the process's CPU time is read (`process.cpuUsage`,
 * getrusage: µs-precise, and time spent waiting for a core on a busy machine is not counted, unlike
 * a profile's wall-clock ticks). It is the whole process's: what helper threads (the garbage
 * collector's, the compiler's) do meanwhile is charged to the segment it overlaps. The thread's own
 * counter (`/proc/thread-self/schedstat`) would leave them out, but it only moves at scheduler ticks
 * and context switches, far coarser than a segment.
 *
 * Meant for one request at a time: requests that overlap are counted and their segments mixed.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** Where the probe answers: `GET` its tallies (`?windows=1` with every segment's times), `DELETE` to start again. */
export const PROBE_PATH = '/bench/probe';

/** The tally of one route: CPU per segment, as `GET PROBE_PATH` answers it. */
export interface RouteTally {
  requests: number;
  /** Requests that began while another was in flight (their segments are mixed). */
  overlapped: number;
  /** Segments `from→to` in the order first seen: CPU ns summed over requests, and how often. */
  segments: Array<{ name: string; cpuNs: number; count: number }>;
  /** Each occurrence of each segment, hrtime µs (the clock of V8's `.cpuprofile`), when asked for. */
  windows?: Record<string, Array<[number, number]>>;
}

/** What `GET PROBE_PATH` answers. */
export interface ProbeReport {
  /** The process's CPU since the last reset, µs (the segments' sum, and what fell outside any request). */
  processCpuUs: number;
  routes: Record<string, RouteTally>;
}

/** The process's CPU time so far, ns. */
function cpuNs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
}

function nowUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

interface Tally {
  requests: number;
  overlapped: number;
  segments: Map<string, { cpuNs: number; count: number; windows: Array<[number, number]> }>;
}

/** Marks, tallies and serves segments of the requests to `paths` on one Fastify server. */
export class StageProbe {
  readonly #paths: ReadonlySet<string>;
  #tallies = new Map<string, Tally>();
  #current: { raw: IncomingMessage; tally: Tally } | undefined;
  #inFlight = 0;
  #lastMark = 'response';
  #lastNs = 0;
  #lastUs = 0;
  #processAtReset = process.cpuUsage();

  constructor(paths: readonly string[]) {
    this.#paths = new Set(paths);
  }

  /**
   * Marks the requests `server` receives and serves {@link PROBE_PATH}; call before it is ready.
   * The `request` listener goes first, ahead of Fastify's own, so every hook of the route is inside.
   */
  install(server: FastifyInstance): void {
    server.server.prependListener('request', (raw: IncomingMessage) => {
      const path = (raw.url ?? '').split('?')[0] as string;
      if (!this.#paths.has(path)) return;
      let tally = this.#tallies.get(path);
      if (tally === undefined) {
        tally = { requests: 0, overlapped: 0, segments: new Map() };
        this.#tallies.set(path, tally);
      }
      tally.requests++;
      if (this.#inFlight++ > 0) tally.overlapped++;
      this.#current = { raw, tally };
      this.mark('request');
    });
    const hook = (name: string) => (request: { raw: IncomingMessage }) => {
      if (this.#current?.raw === request.raw) this.mark(name);
    };
    const preParsing = hook('preParsing');
    server.addHook('preParsing', async (request) => preParsing(request));
    const preValidation = hook('preValidation');
    server.addHook('preValidation', async (request) => preValidation(request));
    const preHandler = hook('preHandler');
    server.addHook('preHandler', async (request) => preHandler(request));
    const preSerialization = hook('preSerialization');
    server.addHook('preSerialization', async (request, _reply, payload) => {
      preSerialization(request);
      return payload;
    });
    const onSend = hook('onSend');
    server.addHook('onSend', async (request, _reply, payload) => {
      onSend(request);
      return payload;
    });
    server.addHook('onResponse', async (request) => {
      if (this.#current?.raw !== request.raw) return;
      this.mark('response');
      this.#inFlight--;
      this.#current = undefined;
    });
    server.get(PROBE_PATH, async (request) =>
      this.report((request.query as { windows?: string }).windows === '1'),
    );
    server.delete(PROBE_PATH, async () => {
      this.#tallies = new Map();
      this.#processAtReset = process.cpuUsage();
      // The next request's first segment would hold this one's work: it is left out.
      this.#lastNs = 0;
      return { reset: true };
    });
  }

  /**
   * Ends the segment running since the last mark, charging it to the request in flight (the one
   * between two requests to the next request, as `response→request`).
   */
  mark(name: string): void {
    const ns = cpuNs();
    const us = nowUs();
    const tally = this.#current?.tally;
    if (tally !== undefined && this.#lastNs !== 0) {
      const key = `${this.#lastMark}→${name}`;
      let segment = tally.segments.get(key);
      if (segment === undefined) {
        segment = { cpuNs: 0, count: 0, windows: [] };
        tally.segments.set(key, segment);
      }
      segment.cpuNs += ns - this.#lastNs;
      segment.count++;
      segment.windows.push([this.#lastUs, us]);
    }
    this.#lastMark = name;
    this.#lastNs = ns;
    this.#lastUs = us;
  }

  /** The tallies since the last reset. */
  report(withWindows: boolean): ProbeReport {
    const { user, system } = process.cpuUsage(this.#processAtReset);
    const routes: Record<string, RouteTally> = {};
    for (const [path, tally] of this.#tallies)
      routes[path] = {
        requests: tally.requests,
        overlapped: tally.overlapped,
        segments: [...tally.segments].map(([name, { cpuNs, count }]) => ({ name, cpuNs, count })),
        ...(withWindows
          ? { windows: Object.fromEntries([...tally.segments].map(([name, s]) => [name, s.windows])) }
          : {}),
      };
    return { processCpuUs: user + system, routes };
  }
}

/** The part of rankd's `RequestContext` class the probe wraps. */
interface StageTimed {
  prototype: { stageEnded(stage: string, start: number, end?: number): number };
}

/** Marks the end of every pipeline stage of the build whose `RequestContext` this is. */
export function markPipelineStages(probe: StageProbe, requestContext: StageTimed): void {
  const original = requestContext.prototype.stageEnded;
  requestContext.prototype.stageEnded = function stageEnded(stage, start, end) {
    probe.mark(stage);
    return original.call(this, stage, start, end);
  };
}
