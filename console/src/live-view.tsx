import { useEffect, useRef, useState } from 'preact/hooks';
import { getBody } from './api.js';
import { format } from './bars.js';
import { ErrorBox } from './error-box.js';
import {
  type Buckets,
  difference,
  histograms,
  parsePrometheus,
  quantile,
  type Sample,
} from './prometheus.js';
import { TimeChart } from './time-chart.js';

const EVERY_MS = 2000;
/** Points the charts keep: two minutes at one read every two seconds. */
const POINTS = 60;
/** The console's own reads, left out of the request rate. */
const OWN_ROUTES = new Set([
  '/metrics',
  '/console',
  '/console/',
  '/console/app.json',
  '/console/sample-ids',
  '/console/assets/:file',
  '/openapi.json',
]);

interface Scrape {
  at: number;
  requests: Map<string, number>;
  stages: Map<string, Buckets>;
}

interface Row {
  key: string;
  p50: number | undefined;
  p99: number | undefined;
  count: number;
}

/** The charts' points: times, and per series one value per time (null: none then). */
interface History {
  times: number[];
  rates: Map<string, Array<number | null>>;
  p50: Map<string, Array<number | null>>;
  p99: Map<string, Array<number | null>>;
}

/** Adds `value` as `series`' point at the newest time (earlier times it missed are null), keeping {@link POINTS}. */
function addPoint(
  history: Map<string, Array<number | null>>,
  series: string,
  value: number | null,
  length: number,
) {
  const points = history.get(series) ?? [];
  while (points.length < length - 1) points.push(null);
  points.push(value);
  history.set(series, points.slice(-POINTS));
}

/** Every series of `history` brought to `length` points: null where nothing came. */
function padded(history: Map<string, Array<number | null>>, length: number): void {
  for (const [series, points] of history) {
    while (points.length < length) points.push(null);
    history.set(series, points.slice(-POINTS));
  }
}

/** `pipeline=shop,stage=model` as `shop · model`. */
function labelOf(key: string): string {
  return key
    .split(',')
    .map((pair) => pair.slice(pair.indexOf('=') + 1))
    .join(' · ');
}

/** Seconds as milliseconds; null for none. */
function msOf(seconds: number | undefined): number | null {
  return seconds === undefined ? null : seconds * 1000;
}

function scrape(samples: readonly Sample[], at: number): Scrape {
  const requests = new Map<string, number>();
  for (const s of samples)
    if (s.name === 'rankd_http_requests_total' && !OWN_ROUTES.has(s.labels.route ?? ''))
      requests.set(s.labels.route ?? '', (requests.get(s.labels.route ?? '') ?? 0) + s.value);
  return { at, requests, stages: histograms(samples, 'rankd_pipeline_stage_duration_seconds') };
}

/**
 * The server live, from its own `GET /metrics`: requests per second by route and p50/p99 per
 * pipeline stage over the last two seconds (since the start while nothing new came in).
 */
export function LiveView() {
  const last = useRef<Scrape>();
  const history = useRef<History>({ times: [], rates: new Map(), p50: new Map(), p99: new Map() });
  const [rates, setRates] = useState<Array<[string, number]>>([]);
  const [rows, setRows] = useState<Row[]>([]);
  const [window, setWindow] = useState('since start');
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let stopped = false;
    const tick = async () => {
      try {
        const now = scrape(parsePrometheus(await getBody<string>('/metrics')), performance.now());
        const before = last.current;
        if (before !== undefined) {
          const seconds = (now.at - before.at) / 1000;
          const rates = [...now.requests].map(([route, n]): [string, number] => [
            route,
            (n - (before.requests.get(route) ?? 0)) / seconds,
          ]);
          setRates(rates.sort((a, b) => b[1] - a[1]));
        }
        const recent = [...now.stages].map(
          ([key, buckets]) => [key, difference(buckets, before?.stages.get(key))] as const,
        );
        const anyRecent = before !== undefined && recent.some(([, b]) => (b.at(-1)?.count ?? 0) > 0);
        if (before !== undefined) {
          // A point per read: the rates and percentiles between this read and the one before.
          const kept = history.current;
          kept.times = [...kept.times, Date.now() / 1000].slice(-POINTS);
          const length = Math.min(kept.times.length, POINTS);
          const seconds = (now.at - before.at) / 1000;
          for (const [route, n] of now.requests)
            addPoint(kept.rates, route, (n - (before.requests.get(route) ?? 0)) / seconds, length);
          for (const [key, buckets] of recent) {
            addPoint(kept.p50, key, msOf(quantile(buckets, 0.5)), length);
            addPoint(kept.p99, key, msOf(quantile(buckets, 0.99)), length);
          }
          for (const series of [kept.rates, kept.p50, kept.p99]) padded(series, length);
        }
        setWindow(anyRecent ? 'last 2 s' : 'since start');
        setRows(
          (anyRecent ? recent : [...now.stages]).map(([key, buckets]) => ({
            key,
            p50: quantile(buckets, 0.5),
            p99: quantile(buckets, 0.99),
            count: Math.max(...buckets.map((b) => b.count), 0),
          })),
        );
        last.current = now;
        setError(undefined);
      } catch (caught) {
        setError(caught);
      }
      if (!stopped) timer = setTimeout(tick, EVERY_MS);
    };
    let timer = setTimeout(tick, 0);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, []);
  const ms = (seconds: number | undefined) => (seconds === undefined ? '—' : `${format(seconds * 1000)} ms`);
  const { times, rates: routeRates, p50, p99 } = history.current;
  const routes = [...routeRates.keys()].sort();
  return (
    <section>
      <ErrorBox error={error} />
      <h3>Requests per second</h3>
      <div class="charts">
        {times.length > 0 && routes.length > 0 && (
          <TimeChart
            name="rates"
            title="requests per second, by route"
            series={routes}
            times={times}
            values={routes.map((route) => routeRates.get(route) ?? [])}
            unit="/s"
          />
        )}
      </div>
      <table class="rates">
        <tbody>
          {rates.map(([route, rate]) => (
            <tr key={route}>
              <th>{route}</th>
              <td class="num">{format(rate)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Pipeline stages</h3>
      <div class="charts">
        {times.length > 0 &&
          [...p50.keys()]
            .sort()
            .map((key) => (
              <TimeChart
                key={key}
                name={`stage:${labelOf(key)}`}
                title={`${labelOf(key)} (ms)`}
                series={['p50', 'p99']}
                times={times}
                values={[p50.get(key) ?? [], p99.get(key) ?? []]}
                unit="ms"
              />
            ))}
      </div>
      <h4>Now ({window})</h4>
      <table class="stages">
        <thead>
          <tr>
            <th>pipeline, stage</th>
            <th class="num">requests</th>
            <th class="num">p50</th>
            <th class="num">p99</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.key}>
              <th>{labelOf(row.key)}</th>
              <td class="num">{row.count}</td>
              <td class="num">{ms(row.p50)}</td>
              <td class="num">{ms(row.p99)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
