import { type ChaosReport, EVERYSEC_WINDOW_MS } from './run-chaos.js';

/** What each fsync setting promises, printed with the figures so that a run says what it tested. */
export function durabilityNote(durable: boolean): string {
  return durable
    ? 'appendfsync always: Redis answers a write only once it is fsynced; nothing acknowledged may be lost, even on a machine crash'
    : 'appendfsync everysec: Redis writes to the AOF file before it answers, so a redis-server crash keeps what it acknowledged ' +
        'unless an fsync was running (then it may hold writes back for up to 2 s); a machine crash can lose the last 1-2 s';
}

/** Prints a chaos run's counts, checks and verdict, as `npm run chaos` shows them. */
export function printReport(report: ChaosReport, print: (line: string) => void = console.log): void {
  const { counts, readBack, latencyMs, memory } = report;
  const n = (value: number) => value.toLocaleString('en-US');
  print('');
  print(`Redis under test: appendfsync ${report.appendfsync} (CONFIG GET)`);
  print(`uploads: ${n(counts.requests)} requests of 10 products`);
  print(`  acknowledged (200):      ${n(counts.ok)} requests, ${n(counts.acknowledgedEntities)} products`);
  print(
    `  failed with 503:         ${n(counts.unavailable)} (answered in ≤ ${latencyMs.unavailableMax} ms, median ${latencyMs.unavailableP50} ms)`,
  );
  print(`  connection cut:          ${n(counts.connection)} (in flight on the killed worker)`);
  print(`  other statuses:          ${n(counts['other-status'])} ${report.otherStatuses.join(' | ')}`);
  print(`  hung (> ${report.hangMs} ms):      ${n(counts.hung)}`);
  print(`read back: ${n(readBack.exact)} of ${n(readBack.acknowledged)} acknowledged products exactly`);
  print(`  lost:                    ${n(readBack.lost)}`);
  if (readBack.lost > 0 && !report.durable)
    print(
      `    ${n(report.lostInEverysecWindow)} of them acknowledged < ${EVERYSEC_WINDOW_MS / 1000} s before a redis-server SIGKILL: ` +
        'the window appendfsync everysec leaves open (Redis holds writes back from the AOF while an fsync runs, and still acknowledges them); `rankd redis --durable` closes it',
    );
  print(`  different:               ${n(readBack.different)}`);
  print(`  failed uploads written whole anyway: ${n(readBack.writtenAnyway)}, in part: ${n(readBack.torn)}`);
  print(
    `memory: workers' RSS peak ${memory.peakMb.toFixed(0)} MB (first quarter ≤ ${memory.firstQuarterMaxMb.toFixed(0)} MB, last quarter ≤ ${memory.lastQuarterMaxMb.toFixed(0)} MB, ${memory.samples} samples)`,
  );
  print(
    `service: ${report.unexpectedWorkerExits} unexpected worker exit (the one killed), SIGTERM at the end → exit ${report.exitCodeAfterSigterm}`,
  );
  print('');
  print(report.problems.length === 0 ? 'PASS' : `FAIL:\n  ${report.problems.join('\n  ')}`);
}
