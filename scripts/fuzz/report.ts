/**
 * The report of a fuzz run: statuses per route, then each kind of failure with its count and its
 * first few requests in a form that can be sent again (curl, or printf into /dev/tcp for framing
 * cases), and the `--seed/--only` that regenerates each one exactly.
 */
import { GROUPS } from './cases.js';
import { FAILURE_KINDS, type FailureKind } from './checks.js';
import type { FuzzCase } from './fuzz-case.js';
import type { Failure, FuzzReport } from './run-fuzz.js';

/** Requests printed per kind of failure. */
const EXAMPLES_PER_KIND = 3;
/** Longer requests are cut in the report (`--only` regenerates them whole). */
const MAX_PRINTED_BYTES = 64 * 1024;

const KIND_MEANING: Record<FailureKind, string> = {
  'server-stopped': 'the server stopped answering',
  timeout: 'no answer within the per-request timeout',
  '5xx': 'a 5xx answer (Redis is up: every 5xx is a bug)',
  'error-shape': "an error body not in rankd's {detail, error_code} shape",
  'accepted-invalid': 'a request that must be refused was accepted',
  'extra-response': 'more answers than requests (a request smuggled in a body was answered)',
  'no-answer': 'the connection closed without an answer',
  sentinel: 'a sentinel entity or feature row changed',
};

/** `bytes` in a bash printf format: printable ASCII as is, everything else as \xHH. */
function printfEscaped(bytes: Buffer): string {
  let out = '';
  for (const byte of bytes) {
    const c = String.fromCharCode(byte);
    if (c === '\r') out += '\\r';
    else if (c === '\n') out += '\\n';
    else if (byte >= 0x20 && byte < 0x7f && c !== '\\' && c !== "'" && c !== '%') out += c;
    else out += `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/** A shell command that sends `c` again to the server at `base`. */
export function replayCommand(c: FuzzCase, base: string): string {
  const port = new URL(base).port;
  const size = c.raw ? c.raw.pieces.reduce((n, p) => n + p.length, 0) : (c.body?.length ?? 0);
  if (size > MAX_PRINTED_BYTES) return `(${size} bytes: too long to print; regenerate it with --only)`;
  if (c.raw) {
    const bytes = Buffer.concat(c.raw.pieces);
    return `exec 3<>/dev/tcp/127.0.0.1/${port}; printf '${printfEscaped(bytes)}' >&3; timeout 5 cat <&3; exec 3<&-`;
  }
  const headers = c.headers.map(([n, v]) => ` -H ${shellQuote(`${n}: ${v}`)}`).join('');
  const url = shellQuote(`${base}${c.path}`);
  if (c.body === undefined) return `curl -sS -i -X ${c.method}${headers} ${url}`;
  return `printf '${printfEscaped(c.body)}' | curl -sS -i -X ${c.method}${headers} --data-binary @- ${url}`;
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

function describe(c: FuzzCase, report: FuzzReport, base: string): string[] {
  // The groups shape the generator: the same index of another --routes is another request.
  const routes = report.groups.length < GROUPS.length ? ` --routes ${report.groups.join(',')}` : '';
  return [
    `    #${c.index} ${c.route} — ${c.kind}${c.mustReject ? ` (must be refused: ${c.mustReject})` : ''}`,
    `    regenerate: npm run fuzz -- --seed ${report.seed}${routes} --only ${c.index}`,
    `    ${replayCommand(c, base)}`,
  ];
}

/** The report as lines. */
export function reportLines(report: FuzzReport, base: string): string[] {
  const lines: string[] = [];
  const seconds = (report.elapsedMs / 1000).toFixed(1);
  lines.push(
    `fuzz: ${report.sent} requests in ${seconds} s (seed ${report.seed}; groups ${report.groups.join(', ')})`,
  );
  lines.push('statuses per route:');
  const routes = Object.keys(report.statuses).sort();
  const width = Math.max(...routes.map((r) => r.length), 10);
  for (const route of routes) {
    const counts = Object.entries(report.statuses[route] ?? {})
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([status, n]) => `${status}×${n}`)
      .join('  ');
    lines.push(`  ${route.padEnd(width)}  ${counts}`);
  }
  if (report.stopped) {
    lines.push('');
    lines.push(`STOPPED: ${report.stopped.reason}.`);
    const { culprit } = report.stopped;
    if (culprit) {
      lines.push(
        `  sent alone to a fresh server, this request stops it answering again (#${culprit.index}), in full:`,
      );
      lines.push(...describe(culprit, report, base));
    }
    const last = report.stopped.lastSent;
    if (last && last !== culprit) {
      lines.push(`  the last request sent (#${last.index}), in full:`);
      lines.push(...describe(last, report, base));
    }
    const others = report.stopped.inFlight.filter((c) => c !== last && c !== culprit);
    if (others.length > 0) {
      lines.push(
        culprit
          ? '  also in flight when it stopped answering:'
          : `  also in flight when it stopped answering (the culprit is one of these ${others.length + 1}):`,
      );
      for (const c of others) lines.push(...describe(c, report, base));
    }
  }
  const byKind = new Map<FailureKind, Failure[]>();
  for (const failure of report.failures)
    byKind.set(failure.kind, [...(byKind.get(failure.kind) ?? []), failure]);
  for (const kind of FAILURE_KINDS) {
    const failures = byKind.get(kind);
    if (!failures || kind === 'server-stopped') continue;
    lines.push('');
    lines.push(`FAIL ${kind}: ${failures.length} — ${KIND_MEANING[kind]}`);
    // One example per distinct route and detail first: ten of the same say less than three different ones.
    const seen = new Set<string>();
    const examples = failures.filter((f) => {
      const key = `${f.request?.route} ${f.detail.slice(0, 60)}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    for (const failure of examples.slice(0, EXAMPLES_PER_KIND)) {
      lines.push(`  ${failure.detail}`);
      if (failure.request) lines.push(...describe(failure.request, report, base));
    }
    const routes = [...new Set(failures.map((f) => f.request?.route).filter((r) => r !== undefined))];
    if (routes.length > 0) lines.push(`  on: ${routes.join(', ')}`);
  }
  if (report.serverOutput.trim().length > 0) {
    lines.push('');
    lines.push('server output (last lines):');
    for (const line of report.serverOutput.split('\n')) lines.push(`  | ${line.slice(0, 400)}`);
  }
  lines.push('');
  lines.push(report.ok ? 'fuzz: OK' : `fuzz: FAILED (${[...byKind.keys()].join(', ')})`);
  return lines;
}
