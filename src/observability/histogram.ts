import type { Metric, Registry } from 'prom-client';

/** Label names to values, as prom-client renders them. */
type Labels = Record<string, string>;

/** One rendered sample, in the shape prom-client's registry turns into a text line. */
interface Sample {
  metricName: string;
  labels: Record<string, string | number>;
  /** Labels common to a series' samples; prom-client formats them once per series and puts them last. */
  sharedLabels?: Readonly<Labels>;
  value: number;
}

/**
 * One label set of a {@link FastHistogram}. Callers keep it (in their own map, or in a closure)
 * and call `observe` on it: a bucket search and three additions, no allocation, no hashing.
 * prom-client's own histogram hashes the labels and allocates on every observation (about 1 µs
 * each, measured), which is too much for a dozen observations per request.
 */
export class HistogramSeries {
  readonly labels: Readonly<Labels>;
  /** Observations per bucket (not cumulative); the last slot is `+Inf`. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  readonly #bounds: Float64Array;

  constructor(labels: Readonly<Labels>, bounds: Float64Array) {
    this.labels = labels;
    this.#bounds = bounds;
    this.counts = new Float64Array(bounds.length + 1);
  }

  /** Records one value (seconds, or a count). */
  observe(value: number): void {
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += value;
    this.count++;
  }
}

/**
 * A Prometheus histogram registered in a prom-client {@link Registry}, which renders it with the
 * other metrics; only the hot path (observe) is ours. Series are created on first use by
 * {@link FastHistogram.series}; callers cache what it returns.
 */
export class FastHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly labelNames: readonly string[];
  readonly buckets: readonly number[];
  readonly #bounds: Float64Array;
  readonly #series = new Map<string, HistogramSeries>();

  constructor(options: {
    name: string;
    help: string;
    labelNames: readonly string[];
    buckets: readonly number[];
    registry: Registry;
  }) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    this.buckets = [...options.buckets].sort((a, b) => a - b);
    this.#bounds = Float64Array.from(this.buckets);
    // prom-client's registry reads metrics through name/help/type and get(); it needs no more.
    options.registry.registerMetric(this as unknown as Metric);
  }

  /** The series of these label values (in `labelNames` order), created at zero if new. */
  series(...values: string[]): HistogramSeries {
    const key = values.join('\u0000');
    let series = this.#series.get(key);
    if (series === undefined) {
      const labels: Labels = {};
      this.labelNames.forEach((name, i) => {
        labels[name] = values[i] ?? '';
      });
      series = new HistogramSeries(labels, this.#bounds);
      this.#series.set(key, series);
    }
    return series;
  }

  /** Every series so far (for derived metrics such as a request counter). */
  allSeries(): IterableIterator<HistogramSeries> {
    return this.#series.values();
  }

  /** Zeroes every series (prom-client's `registry.resetMetrics()` calls this). */
  reset(): void {
    for (const series of this.#series.values()) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }

  /** What prom-client's registry renders: cumulative buckets, `_sum` and `_count` per series. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    for (const series of this.#series.values()) {
      let cumulative = 0;
      const sharedLabels = series.labels;
      this.buckets.forEach((bound, i) => {
        cumulative += series.counts[i] ?? 0;
        values.push({
          metricName: `${this.name}_bucket`,
          labels: { le: bound },
          sharedLabels,
          value: cumulative,
        });
      });
      values.push(
        { metricName: `${this.name}_bucket`, labels: { le: '+Inf' }, sharedLabels, value: series.count },
        { metricName: `${this.name}_sum`, labels: {}, sharedLabels, value: series.sum },
        { metricName: `${this.name}_count`, labels: {}, sharedLabels, value: series.count },
      );
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/**
 * A counter whose value per series is a histogram's count: `rankd_http_requests_total` costs
 * nothing on top of the latency histogram that already counts every request.
 */
export class CountOfHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'counter';
  readonly aggregator = 'sum';
  readonly #histogram: FastHistogram;

  constructor(options: { name: string; help: string; histogram: FastHistogram; registry: Registry }) {
    this.name = options.name;
    this.help = options.help;
    this.#histogram = options.histogram;
    options.registry.registerMetric(this as unknown as Metric);
  }

  /** Nothing of its own to reset: it reads the histogram. */
  reset(): void {}

  /** One sample per series of the histogram. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    for (const series of this.#histogram.allSeries())
      values.push({ metricName: this.name, labels: { ...series.labels }, value: series.count });
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
