/** Prometheus text (what `GET /metrics` answers), read in the browser. */

/** One sample: metric name, labels, value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Every sample of the text; comments and lines it cannot read are skipped. */
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = LINE.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? '').matchAll(LABEL))
      if (key !== undefined && raw !== undefined)
        labels[key] = raw.replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1] ?? '', labels, value: Number(match[3]) });
  }
  return samples;
}

/** A histogram's cumulative bucket counts, by upper bound (`+Inf` last). */
export type Buckets = Array<{ le: number; count: number }>;

/** The quantile `q` of a histogram, interpolated in its bucket as Prometheus' histogram_quantile does. */
export function quantile(buckets: Buckets, q: number): number | undefined {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const total = sorted.at(-1)?.count ?? 0;
  if (total === 0) return undefined;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const { le, count } of sorted) {
    if (count >= rank) {
      if (le === Number.POSITIVE_INFINITY) return lowerBound;
      const inBucket = count - lowerCount;
      return inBucket === 0 ? le : lowerBound + ((le - lowerBound) * (rank - lowerCount)) / inBucket;
    }
    lowerBound = le;
    lowerCount = count;
  }
  return lowerBound;
}

/** Buckets of `name` grouped by the labels other than `le`, keyed `a=1,b=2`. */
export function histograms(samples: readonly Sample[], name: string): Map<string, Buckets> {
  const groups = new Map<string, Buckets>();
  for (const sample of samples) {
    if (sample.name !== `${name}_bucket`) continue;
    const { le, ...rest } = sample.labels;
    const key = Object.entries(rest)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const buckets = groups.get(key) ?? [];
    buckets.push({ le: le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), count: sample.value });
    groups.set(key, buckets);
  }
  return groups;
}

/** `later - earlier`, bucket by bucket (what happened between two scrapes). */
export function difference(later: Buckets, earlier: Buckets | undefined): Buckets {
  if (earlier === undefined) return later;
  return later.map(({ le, count }) => ({
    le,
    count: count - (earlier.find((b) => b.le === le)?.count ?? 0),
  }));
}
