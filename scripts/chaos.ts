/**
 * `npm run chaos [-- --duration 60 --fsync everysec|always]`: uploads at concurrency 16 against
 * `rankd run --workers 2` on a Redis started as `rankd redis` does, while redis-server is SIGKILLed
 * and restarted twice and a worker is SIGKILLed once; then every acknowledged upload is read back.
 * Prints the counts and exits 1 when anything was lost, torn, hung, answered other than 200/503,
 * or the service did not survive. test/chaos.test.ts runs the same code for 25 s. See
 * docs/guides/deploy.md ("Durability") for what the two fsync settings promise.
 */
import { parseArgs } from 'node:util';
import { durabilityNote, printReport } from './chaos/print-report.js';
import { runChaos } from './chaos/run-chaos.js';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '60' },
      fsync: { type: 'string', default: 'everysec' },
      outage: { type: 'string', default: '2' },
    },
  });
  const durationMs = Number(values.duration) * 1000;
  if (!(durationMs >= 10_000)) throw new Error('--duration: seconds, at least 10');
  if (values.fsync !== 'everysec' && values.fsync !== 'always')
    throw new Error('--fsync: everysec or always');
  const durable = values.fsync === 'always';
  console.log(
    `chaos: ${durationMs / 1000} s of uploads at concurrency 16 against rankd run --workers 2; ` +
      `Redis started as \`rankd redis${durable ? ' --durable' : ''}\` (AOF, appendfsync ${values.fsync})`,
  );
  console.log(`  ${durabilityNote(durable)}`);
  const report = await runChaos({
    durationMs,
    durable,
    outageMs: Number(values.outage) * 1000,
    log: (line) => console.log(`  ${line}`),
  });
  printReport(report);
  return report.problems.length === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exitCode = 1;
  },
);
