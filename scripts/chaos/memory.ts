import { readFileSync } from 'node:fs';
import { childPids } from '../../test/helpers/cli-service.js';

/** One reading of one worker's resident memory. */
export interface RssSample {
  atMs: number;
  pid: number;
  rssMb: number;
}

/** Resident set size of `pid` in MB (Linux /proc), or undefined when it is gone. */
export function rssMb(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** What the samples say: the peak, and the highest reading in the first and last quarter of the run. */
export interface MemorySummary {
  samples: number;
  peakMb: number;
  firstQuarterMaxMb: number;
  lastQuarterMaxMb: number;
}

/** Reads the RSS of every worker of `primaryPid` every `intervalMs` until `stop()`. */
export class WorkerMemory {
  readonly samples: RssSample[] = [];
  readonly #timer: NodeJS.Timeout;

  constructor(primaryPid: number, elapsedMs: () => number, intervalMs = 500) {
    this.#timer = setInterval(() => {
      for (const pid of childPids(primaryPid)) {
        const mb = rssMb(pid);
        if (mb !== undefined) this.samples.push({ atMs: elapsedMs(), pid, rssMb: mb });
      }
    }, intervalMs);
  }

  /** Stops sampling and summarises over a run of `durationMs`. */
  stop(durationMs: number): MemorySummary {
    clearInterval(this.#timer);
    const max = (from: number, to: number) =>
      Math.max(0, ...this.samples.filter((s) => s.atMs >= from && s.atMs < to).map((s) => s.rssMb));
    return {
      samples: this.samples.length,
      peakMb: max(0, Number.POSITIVE_INFINITY),
      firstQuarterMaxMb: max(0, durationMs / 4),
      lastQuarterMaxMb: max((3 * durationMs) / 4, Number.POSITIVE_INFINITY),
    };
  }
}
