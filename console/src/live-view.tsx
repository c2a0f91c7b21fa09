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

const EVERY_MS = 2000;
/** The console's own reads, left out of the request rate. */
const OWN_ROUTES = new Set([
  '/metrics',
  '/console',
  '/console/',
  '/console/app.json',
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

/** `pipeline=shop,stage=model` as `shop · model`. */
function labelOf(key: string): string {
  return key
    .split(',')
    .map((pair) => pair.slice(pair.indexOf('=') + 1))
    .join(' · ');
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
  return (
    <section>
      <ErrorBox error={error} />
      <h3>Requests per second</h3>
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
      <h3>Pipeline stages ({window})</h3>
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
