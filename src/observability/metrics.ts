import { AggregatorRegistry, Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { DROP_REASONS } from '../events/event-sink.js';
import type { RedisErrorKind, RedisObserver } from '../redis/observer.js';
import { OUTAGE_CAUSES } from '../redis/outages.js';
import type { ReadCache } from '../redis/read-cache.js';
import type { Degradation } from '../request/degradation.js';
import { PIPELINE_STAGES, type PipelineStage, type StageObserver } from '../request/stage-timing.js';
import { CountOfHistogram, FastHistogram, type HistogramSeries } from './histogram.js';
import { onModelReload } from './model-reloads.js';

/**
 * Request latency buckets, seconds: rankd answers in about 1–50 ms; the top buckets catch
 * requests that waited on a Redis timeout (`REDIS_COMMAND_TIMEOUT_MS`, 2 s by default).
 */
const HTTP_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** Stage latency buckets, seconds: stages are fractions of a request, from 100 µs up. */
const STAGE_DURATION_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1,
];
/** Redis command buckets, seconds: a local round trip is ~100 µs; 2.5 s holds the default timeout. */
const REDIS_DURATION_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];
/** Candidates per ranking request: up to the default maximum (1000) and beyond for raised limits. */
const CANDIDATE_BUCKETS = [1, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

/** What an event sink reports (its `stats()`): totals since it started. */
export interface EventCounts {
  /** Events written to the sink. */
  readonly written: number;
  /** Events dropped: buffer full, or a batch the sink refused. */
  readonly dropped: number;
  /** By reason (`buffer_full`, `redis_oom`, ...), adding up to `dropped`; else every drop is `other`. */
  readonly droppedBy?: Readonly<Record<string, number>>;
  /** Batches whose write failed. */
  readonly failedBatches?: number;
  /** Events waiting in the sink's buffer now. */
  readonly pending?: number;
}

/** What admission control reports at each scrape (src/http/admission-control.ts). */
export interface AdmissionCounts {
  /** Cost of the cheap requests in flight. */
  readonly cheapCost: number;
  /** Cost of the expensive requests in flight. */
  readonly expensiveCost: number;
  /** Expensive requests waiting for room. */
  readonly waiting: number;
  /** The event loop's recent delay, in ms. */
  readonly loopDelayMs: number;
}

/** Latency and count of one route, by method and status; made once per route when it is registered. */
class HttpRouteMetrics {
  readonly #histogram: FastHistogram;
  readonly #route: string;
  /** method → status → series: two map look-ups per request, no key string built. */
  readonly #byMethod = new Map<string, Map<number, HistogramSeries>>();

  constructor(histogram: FastHistogram, route: string) {
    this.#histogram = histogram;
    this.#route = route;
  }

  /** Records one answered request. */
  record(method: string, status: number, seconds: number): void {
    let byStatus = this.#byMethod.get(method);
    if (byStatus === undefined) {
      byStatus = new Map();
      this.#byMethod.set(method, byStatus);
    }
    let series = byStatus.get(status);
    if (series === undefined) {
      series = this.#histogram.series(this.#route, method, String(status));
      byStatus.set(status, series);
    }
    series.observe(seconds);
  }
}

/** A counter that mirrors a total read at scrape time (an event sink's `stats()`). */
function mirroredCounter(registry: Registry, name: string, help: string, read: () => number | undefined) {
  let last = 0;
  return new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = read();
      if (now === undefined || now === last) return;
      // A total that went down belongs to a new sink: start over rather than count backwards.
      if (now < last) {
        this.reset();
        last = 0;
      }
      this.inc(now - last);
      last = now;
    },
  });
}

/**
 * One process's metrics as data (prom-client's JSON form, every sample with all its labels): what
 * a worker sends the primary, which sums them with `renderSummed`.
 */
export type MetricsSnapshot = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/**
 * The metrics of several processes (a primary's workers) as one text: each metric combined by its
 * aggregator — counters, histograms and most gauges summed, version info taken once — so that a
 * scrape sees the whole server, whichever workers there are.
 */
export async function renderSummed(
  snapshots: readonly MetricsSnapshot[],
): Promise<{ contentType: string; text: string }> {
  const registry = AggregatorRegistry.aggregate([...snapshots]);
  return { contentType: registry.contentType, text: await registry.metrics() };
}

/**
 * The Prometheus metrics of one server, in a registry of its own (servers in one process, as in
 * tests, never clash), all named `rankd_*`, with Node's process metrics. The hot paths observe
 * cached series: no labels are looked up or built.
 *
 * @example
 * ```ts
 * import { buildServer } from 'rankd/server';
 * import app from './pipelines/main.js';
 *
 * const server = await buildServer({ app });
 * // The Prometheus text /metrics serves; undefined with METRICS_ACCESS=off.
 * const metrics = server.rankd.metrics;
 * if (metrics) console.log(await metrics.render());
 * ```
 */
export class RankdMetrics {
  /** The server's registry: rankd's metrics and the process metrics (`rankd_process_*`, `rankd_nodejs_*`). */
  readonly registry = new Registry();
  readonly #http: FastHistogram;
  readonly #stages: FastHistogram;
  readonly #stageSeries = new Map<string, Record<PipelineStage, HistogramSeries>>();
  readonly #redis: FastHistogram;
  readonly #redisSeries = new Map<string, HistogramSeries>();
  readonly #redisErrors: Record<RedisErrorKind, { inc(value?: number): void }>;
  readonly #candidates: FastHistogram;
  readonly #candidateSeries = new Map<string, HistogramSeries>();
  readonly #modelReloads: Counter<'model' | 'result'>;
  readonly #degradedRequests: Counter<'route' | 'cause'>;
  readonly #degradedReads: Counter<'kind' | 'cause'>;
  readonly #notInIndex: Counter<'pipeline'>;
  readonly #emptyIndex: Gauge<'entity_type'>;
  #eventStats: (() => EventCounts) | undefined;
  readonly #stopListening: () => void;

  /** `pipelines`: names whose stage series exist from the start, so dashboards show zeros, not gaps. */
  constructor(options: { pipelines?: readonly string[] } = {}) {
    const registry = this.registry;
    collectDefaultMetrics({ register: registry, prefix: 'rankd_' });
    this.#http = new FastHistogram({
      name: 'rankd_http_request_duration_seconds',
      help: 'HTTP request latency, by route pattern (`unknown` for 404s), method and status',
      labelNames: ['route', 'method', 'status'],
      buckets: HTTP_DURATION_BUCKETS,
      registry,
    });
    new CountOfHistogram({
      name: 'rankd_http_requests_total',
      help: 'HTTP requests answered, by route pattern (`unknown` for 404s), method and status',
      histogram: this.#http,
      registry,
    });
    this.#stages = new FastHistogram({
      name: 'rankd_pipeline_stage_duration_seconds',
      help: 'Time per pipeline stage (hydrate and features overlap: both start with the request)',
      labelNames: ['pipeline', 'stage'],
      buckets: STAGE_DURATION_BUCKETS,
      registry,
    });
    this.#redis = new FastHistogram({
      name: 'rankd_redis_command_duration_seconds',
      help: 'Redis command latency (a MULTI/EXEC counts as one), failed commands included',
      labelNames: ['command'],
      buckets: REDIS_DURATION_BUCKETS,
      registry,
    });
    const redisErrors = new Counter({
      name: 'rankd_redis_errors_total',
      help: 'Failed Redis commands: timeout, unavailable (refused, disconnected) or reply (an error answer)',
      labelNames: ['kind'] as const,
      registers: [registry],
    });
    this.#redisErrors = {
      timeout: redisErrors.labels('timeout'),
      unavailable: redisErrors.labels('unavailable'),
      reply: redisErrors.labels('reply'),
    };
    // At zero from the start: an alert on `increase()` needs the series before the first error.
    for (const child of Object.values(this.#redisErrors)) child.inc(0);
    this.#candidates = new FastHistogram({
      name: 'rankd_candidates_per_request',
      help: 'Candidates in each ranking request',
      labelNames: ['pipeline'],
      buckets: CANDIDATE_BUCKETS,
      registry,
    });
    mirroredCounter(
      registry,
      'rankd_events_written_total',
      'Events written to the sink',
      () => this.#eventStats?.().written,
    );
    const dropped = new Counter({
      name: 'rankd_events_dropped_total',
      help:
        'Events dropped, by reason: buffer_full (the sink slow or down), redis_oom (the event Redis ' +
        'out of memory), write_failed, not_json, closing, over_budget (no room within the stream memory budget)',
      labelNames: ['reason'] as const,
      registers: [registry],
      collect: () => {
        const counts = this.#eventStats?.();
        if (counts === undefined) return;
        const byReason = counts.droppedBy ?? { other: counts.dropped };
        for (const [reason, now] of Object.entries(byReason)) {
          const last = droppedSeen.get(reason) ?? 0;
          if (now === last) continue;
          // A total that went down belongs to a new sink: start over rather than count backwards.
          if (now < last) {
            dropped.remove(reason);
            droppedSeen.set(reason, 0);
            dropped.labels(reason).inc(now);
          } else dropped.labels(reason).inc(now - last);
          droppedSeen.set(reason, now);
        }
      },
    });
    // One entry per reason (six), not per request; at zero from the start for `increase()` alerts.
    const droppedSeen = new Map<string, number>();
    for (const reason of DROP_REASONS) dropped.labels(reason).inc(0);
    mirroredCounter(
      registry,
      'rankd_events_failed_batches_total',
      'Event batches the sink failed to write',
      () => this.#eventStats?.().failedBatches,
    );
    const stats = () => this.#eventStats?.();
    new Gauge({
      name: 'rankd_events_pending',
      help: "Events waiting in the sink's buffer",
      registers: [registry],
      collect: function (this: Gauge) {
        const pending = stats()?.pending;
        if (pending !== undefined) this.set(pending);
      },
    });
    this.#modelReloads = new Counter({
      name: 'rankd_model_reloads_total',
      help: 'Model reload attempts, by model and result',
      labelNames: ['model', 'result'] as const,
      registers: [registry],
    });
    this.#degradedRequests = new Counter({
      name: 'rankd_degraded_requests_total',
      help:
        'Requests answered without what some Redis Cluster masters hold (degraded ranking, partial gets), by ' +
        'route and cause (offline, timeout, cluster_down, busy); a request that met two causes counts under each',
      labelNames: ['route', 'cause'] as const,
      registers: [registry],
    });
    this.#degradedReads = new Counter({
      name: 'rankd_degraded_reads_total',
      help:
        'Entities (kind=entity) and feature rows (kind=feature_row) treated as not found because their Redis ' +
        'Cluster master could not answer, by cause',
      labelNames: ['kind', 'cause'] as const,
      registers: [registry],
    });
    // At zero from the start: an alert on `increase()` needs the series before the first outage.
    for (const cause of OUTAGE_CAUSES)
      for (const kind of ['entity', 'feature_row']) this.#degradedReads.labels(kind, cause).inc(0);
    this.#stopListening = onModelReload((model, result) => this.modelReloaded(model, result));
    for (const pipeline of options.pipelines ?? []) this.#stageSeriesOf(pipeline);
    // What was missing, said out loud: candidates ranked without their entity, and empty index types.
    this.#notInIndex = new Counter({
      name: 'rankd_candidates_not_in_index_total',
      help: 'Ranking candidates the index did not hold (ranked with the fields sent), by pipeline',
      labelNames: ['pipeline'] as const,
      registers: [registry],
    });
    for (const pipeline of options.pipelines ?? []) this.#notInIndex.labels(pipeline).inc(0);
    this.#emptyIndex = new Gauge({
      name: 'rankd_index_empty',
      help: '1 while the index holds no entity of a type the app declares (checked at start and every minute), else 0',
      labelNames: ['entity_type'] as const,
      registers: [registry],
      // Every worker sees the same Redis: summed, two workers would say 2.
      aggregator: 'max',
    });
  }

  /** Counts candidates of one ranking request that the index did not hold. */
  candidatesNotInIndex(pipeline: string, count: number): void {
    this.#notInIndex.labels(pipeline).inc(count);
  }

  /** Records whether the index holds any entity of `entityType` (`rankd_index_empty`). */
  indexEmpty(entityType: string, empty: boolean): void {
    this.#emptyIndex.labels(entityType).set(empty ? 1 : 0);
  }

  /** Times pipeline stages (`rankd_pipeline_stage_duration_seconds`). */
  readonly stages: StageObserver = {
    stage: (pipeline, stage, start, end) => {
      this.#stageSeriesOf(pipeline)[stage].observe((end - start) / 1000);
    },
  };

  /** Times Redis commands and counts their failures. */
  readonly redis: RedisObserver = {
    commandDone: (command, seconds) => {
      let series = this.#redisSeries.get(command);
      if (series === undefined) {
        series = this.#redis.series(command);
        this.#redisSeries.set(command, series);
      }
      series.observe(seconds);
    },
    commandFailed: (_command, kind) => {
      this.#redisErrors[kind].inc();
    },
  };

  /** The recorder of one route (a pattern such as `/api/v1/ranking`, never a raw URL). */
  httpRoute(route: string): HttpRouteMetrics {
    return new HttpRouteMetrics(this.#http, route);
  }

  /**
   * Counts a request served degraded on `route` (a pattern such as `/api/v1/ranking`), and what it
   * could not read. Only degraded requests get here: nothing is done for the others.
   */
  degraded(route: string, degradation: Degradation): void {
    for (const cause of degradation.causes) this.#degradedRequests.labels(route, cause).inc();
    for (const [cause, count] of Object.entries(degradation.entitiesByCause))
      this.#degradedReads.labels('entity', cause).inc(count);
    for (const [cause, count] of Object.entries(degradation.featureRowsByCause))
      this.#degradedReads.labels('feature_row', cause).inc(count);
  }

  /** Records the size of one ranking request. */
  candidates(pipeline: string, count: number): void {
    let series = this.#candidateSeries.get(pipeline);
    if (series === undefined) {
      series = this.#candidates.series(pipeline);
      this.#candidateSeries.set(pipeline, series);
    }
    series.observe(count);
  }

  /**
   * Makes `rankd_events_written_total`, `rankd_events_dropped_total` and
   * `rankd_events_failed_batches_total` mirror `stats` (the event sink's totals), read at each
   * scrape. A later call replaces the source.
   */
  registerEventStats(stats: () => EventCounts): void {
    this.#eventStats = stats;
  }

  /** Counts a model reload; {@link reportModelReload} reaches here for every server. */
  modelReloaded(model: string, result: string): void {
    this.#modelReloads.labels(model, result).inc();
  }

  /** The Content-Type of {@link render}'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every metric in Prometheus text format. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /**
   * Every metric as data, for a primary to sum (`renderSummed`). rankd's histograms keep a
   * series' labels apart from each sample's (`sharedLabels`), which prom-client's aggregation
   * does not read: each sample gets them all here, or every route's series would be added up.
   */
  async snapshot(): Promise<MetricsSnapshot> {
    const metrics = await this.registry.getMetricsAsJSON();
    for (const metric of metrics) {
      metric.values = metric.values.map((value) => {
        const { sharedLabels, ...rest } = value as typeof value & { sharedLabels?: Record<string, string> };
        return sharedLabels === undefined ? value : { ...rest, labels: { ...sharedLabels, ...value.labels } };
      });
    }
    return metrics;
  }

  // Admission control (src/http/admission-control.ts).
  /**
   * The admission control metrics: `rankd_requests_shed_total` by reason (each of `reasons` at zero
   * from the start), and, read at each scrape from `stats`, `rankd_admission_cost_in_flight` by
   * class, `rankd_admission_waiting` and `rankd_admission_loop_delay_seconds`. Returns what counts
   * one refusal.
   */
  registerAdmission(reasons: readonly string[], stats: () => AdmissionCounts): (reason: string) => void {
    const registry = this.registry;
    const shed = new Counter({
      name: 'rankd_requests_shed_total',
      help:
        'Requests refused by admission control, by reason: budget (ADMISSION_BUDGET full), expensive_wait (an ' +
        'expensive request found no room within a second), loop_delay (the event loop lagged), key_share (429)',
      labelNames: ['reason'] as const,
      registers: [registry],
    });
    const byReason = new Map(reasons.map((reason) => [reason, shed.labels(reason)]));
    for (const child of byReason.values()) child.inc(0);
    new Gauge({
      name: 'rankd_admission_cost_in_flight',
      help: 'Cost of the requests in flight (units of about 10 µs of work), by class: cheap or expensive',
      labelNames: ['class'] as const,
      registers: [registry],
      collect: function (this: Gauge<'class'>) {
        const now = stats();
        this.labels('cheap').set(now.cheapCost);
        this.labels('expensive').set(now.expensiveCost);
      },
    });
    new Gauge({
      name: 'rankd_admission_waiting',
      help: 'Expensive requests waiting for room',
      registers: [registry],
      collect: function (this: Gauge) {
        this.set(stats().waiting);
      },
    });
    new Gauge({
      name: 'rankd_admission_loop_delay_seconds',
      help: 'The longest the event loop made a timer wait in the last quarter second (admission control holds expensive requests above 0.1 s); summed over workers',
      registers: [registry],
      collect: function (this: Gauge) {
        this.set(stats().loopDelayMs / 1000);
      },
    });
    return (reason) => (byReason.get(reason) ?? shed.labels(reason)).inc();
  }

  /**
   * The read cache's metrics (`READ_CACHE_MB`, DR-020), read from `cache` at each scrape:
   * `rankd_read_cache_{hits,misses,invalidations,flushes,evictions}_total`, and the gauges
   * `rankd_read_cache_bytes`, `rankd_read_cache_entries` and `rankd_read_cache_serving` (1 while
   * every tracking connection tracks).
   */
  registerReadCache(cache: ReadCache): void {
    const registry = this.registry;
    const counters = {
      hits: 'Keys read from the read cache',
      misses: 'Keys the read cache did not hold, read from Redis (none counted while it does not serve)',
      invalidations: 'Cached keys dropped because Redis (or this process) wrote them',
      flushes:
        'Times the whole read cache was dropped: a tracking connection lost or back, FLUSHALL, new cluster masters',
      evictions: 'Cached keys dropped to stay within READ_CACHE_MB',
    } as const;
    for (const [name, help] of Object.entries(counters) as Array<[keyof typeof counters, string]>)
      mirroredCounter(registry, `rankd_read_cache_${name}_total`, help, () => cache.stats[name]);
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        collect: function (this: Gauge) {
          this.set(read());
        },
      });
    gauge(
      'rankd_read_cache_bytes',
      'Bytes the read cache holds (keys, values and bookkeeping)',
      () => cache.bytes,
    );
    gauge('rankd_read_cache_entries', 'Keys the read cache holds', () => cache.size);
    gauge('rankd_read_cache_serving', '1 while the read cache serves (every node tracked), else 0', () =>
      cache.enabled ? 1 : 0,
    );
  }

  /** Stops listening to model reloads (the server is closing). */
  close(): void {
    this.#stopListening();
  }

  #stageSeriesOf(pipeline: string): Record<PipelineStage, HistogramSeries> {
    let byStage = this.#stageSeries.get(pipeline);
    if (byStage === undefined) {
      const made = {} as Record<PipelineStage, HistogramSeries>;
      for (const stage of PIPELINE_STAGES) made[stage] = this.#stages.series(pipeline, stage);
      byStage = made;
      this.#stageSeries.set(pipeline, byStage);
    }
    return byStage;
  }
}
