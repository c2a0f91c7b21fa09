import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * A network namespace of a test's own (`unshare --net`, loopback up): inside it, ports 5001 and
 * 6379 are the test's, so a page's `npm start` (a local Redis on 6379, the server on 5001) runs
 * as a reader runs it, and never meets the machine's own Redis or server. Needs root (CI runs as
 * root on Debian). A process that holds the namespace lives as long as this object; `close()`
 * kills every process inside it, and so does this test process's exit.
 */
export class NetworkNamespace {
  readonly #holder: ChildProcess;
  /** `net:[inode]`, what /proc/<pid>/ns/net links to for every process inside. */
  readonly #id: string;
  readonly #onExit: () => void;

  private constructor(holder: ChildProcess, id: string) {
    this.#holder = holder;
    this.#id = id;
    this.#onExit = () => this.#killInside();
    process.once('exit', this.#onExit);
  }

  /** Why no namespace can be made here, or undefined when one can. */
  static unavailable(): string | undefined {
    if (process.platform !== 'linux') return 'network namespaces are Linux only';
    if (process.getuid?.() !== 0) return 'a network namespace needs root (unshare --net)';
    const probe = spawnSync('unshare', ['--net', 'ip', 'link', 'set', 'lo', 'up'], { encoding: 'utf8' });
    if (probe.status !== 0)
      return `unshare --net with ip failed: ${probe.error?.message ?? probe.stderr.trim()}`;
    return undefined;
  }

  /** Makes a namespace with its loopback interface up. */
  static async create(): Promise<NetworkNamespace> {
    // `cat` holds the namespace, and ends when this process does (its stdin closes).
    const holder = spawn('unshare', ['--net', 'sh', '-c', 'ip link set lo up && echo up && exec cat'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      holder.once('error', reject);
      holder.once('exit', (code) => reject(new Error(`unshare --net exited with ${code}`)));
      holder.stdout?.once('data', () => resolve());
    });
    return new NetworkNamespace(holder, readlinkSync(`/proc/${holder.pid}/ns/net`));
  }

  /** `argv` run inside the namespace (nsenter execs it: the pid is the command's own). */
  command(argv: readonly string[]): [string, ...string[]] {
    return ['nsenter', `--net=/proc/${this.#holder.pid}/ns/net`, ...argv];
  }

  /** The processes inside the namespace but its holder, with their command lines. */
  processes(): Array<{ pid: number; command: string }> {
    const found: Array<{ pid: number; command: string }> = [];
    for (const entry of readdirSync('/proc')) {
      const pid = Number(entry);
      if (!Number.isInteger(pid) || pid === this.#holder.pid) continue;
      try {
        if (readlinkSync(`/proc/${pid}/ns/net`) !== this.#id) continue;
        const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
        found.push({ pid, command });
      } catch {
        // Gone meanwhile.
      }
    }
    return found;
  }

  /** Kills every process inside, then the holder: the namespace goes with its last process. */
  close(): void {
    this.#killInside();
    process.off('exit', this.#onExit);
  }

  #killInside(): void {
    for (const { pid } of this.processes()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
    this.#holder.kill('SIGKILL');
  }
}
