/** One sample of the Prometheus text format: `name{label="value",...} number`. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the text exposition format (0.0.4): samples only; `# HELP`/`# TYPE` lines go to `types`. */
export function parsePrometheus(text: string): { samples: PromSample[]; types: Map<string, string> } {
  const samples: PromSample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.length === 0) continue;
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      if (name && type) types.set(name, type);
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? '').matchAll(LABEL))
      labels[key as string] = (raw as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    const value = match[3] === '+Inf' ? Number.POSITIVE_INFINITY : Number(match[3]);
    samples.push({ name: match[1] as string, labels, value });
  }
  return { samples, types };
}

/** The samples of `name` whose labels include every pair of `labels`. */
export function find(samples: readonly PromSample[], name: string, labels: Record<string, string> = {}) {
  return samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
}

/** The value of the one sample of `name` with exactly `labels`; throws when there is not exactly one. */
export function sampleValue(
  samples: readonly PromSample[],
  name: string,
  labels: Record<string, string> = {},
): number {
  const matches = samples.filter(
    (s) =>
      s.name === name &&
      Object.keys(s.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (matches.length !== 1)
    throw new Error(`${matches.length} samples of ${name}${JSON.stringify(labels)}, expected exactly 1`);
  return (matches[0] as PromSample).value;
}
