/**
 * A page of the docs as steps a reader takes, in order: the shell blocks to run as written, the
 * files to save, the outputs to compare. The conventions, HTML comments just before a fenced block
 * (a reader does not see them; the page's own words say the same):
 *
 *   ```sh / ```bash / ```shell           commands, run as they are written
 *   ```console                           `$ command` lines, each followed by what it prints
 *   <!-- output -->                      the block is what the run block before it printed;
 *   <!-- output: examples/x.sh -->       `…` in it stands for text that changes from run to run
 *   <!-- output, numbers aside -->       the same, any number (and ISO time) for the one shown
 *   <!-- numbers aside -->               before a console block: the same for its outputs
 *   <!-- file: train.py -->              the block is saved under that name, as the page asks
 *   <!-- runs in the background; ready when it prints "rankd serving" -->
 *                                        a command the reader leaves running (`npm start`) and
 *                                        works beside, in another terminal
 *   <!-- exit status: 0 or 1 (why) -->   the command may end with any of these; else only with 0
 *   <!-- not run: why -->                a command block the reader of this page does not run here
 *   <!-- not run literally: why -->      near the top: the whole page cannot be followed so (its
 *                                        text says so too)
 */
import { readFileSync } from 'node:fs';

/** One step of a page, with the line of the page its block starts on. */
export type GuideStep =
  | {
      kind: 'run';
      line: number;
      script: string;
      /** Set for a command left running: the text that says it is ready. */
      background?: string;
      exitStatuses: readonly number[];
    }
  | {
      kind: 'console';
      line: number;
      commands: ReadonlyArray<{ command: string; output: string }>;
      numbersAside: boolean;
    }
  | { kind: 'output'; line: number; text: string; numbersAside: boolean }
  | { kind: 'file'; line: number; path: string; text: string }
  | { kind: 'skipped'; line: number; reason: string; text: string };

/** A page and what following it takes. */
export interface GuidePage {
  readonly path: string;
  /** Why the page cannot be followed word for word, when it says so at its top. */
  readonly notRunLiterally: string | undefined;
  readonly steps: readonly GuideStep[];
}

const SHELL = new Set(['sh', 'bash', 'shell']);

/** Reads `path` into its steps. Throws on a marker that names no block it can apply to. */
export function guidePage(path: string): GuidePage {
  const lines = readFileSync(path, 'utf8').split('\n');
  const top = lines.slice(0, 10).join('\n');
  const notRunLiterally = /<!-- not run literally: (.*?) -->/.exec(top)?.[1];
  const steps: GuideStep[] = [];
  let markers: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] ?? '';
    const comment = /^<!-- (.*) -->$/.exec(text.trim());
    if (comment) {
      markers.push(comment[1] ?? '');
      continue;
    }
    const fence = /^```(\S*)\s*$/.exec(text);
    if (!fence) {
      markers = [];
      continue;
    }
    const start = i + 1;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ''); i++) body.push(lines[i] ?? '');
    const block = body.length === 0 ? '' : `${body.join('\n')}\n`;
    steps.push(...stepsOf(fence[1] ?? '', block, markers, start, path));
    markers = [];
  }
  return { path, notRunLiterally, steps };
}

function stepsOf(
  language: string,
  block: string,
  markers: readonly string[],
  line: number,
  path: string,
): GuideStep[] {
  const marker = (pattern: RegExp) => markers.map((m) => pattern.exec(m)).find((m) => m !== null);
  const file = marker(/^file: (\S+)$/)?.[1];
  if (file !== undefined) return [{ kind: 'file', line, path: file, text: block }];
  const output = marker(/^output(, numbers aside)?(: \S+)?$/);
  if (output) return [{ kind: 'output', line, text: block, numbersAside: output[1] !== undefined }];
  const runnable = SHELL.has(language) || language === 'console';
  const notRun = marker(/^not run: (.*)$/)?.[1];
  if (!runnable) {
    if (notRun !== undefined)
      throw new Error(`${path}:${line}: "not run" before a block that is not commands`);
    return [];
  }
  if (notRun !== undefined) return [{ kind: 'skipped', line, reason: notRun, text: block }];
  if (language === 'console') {
    const commands: Array<{ command: string; output: string }> = [];
    for (const text of block.split('\n')) {
      if (text.startsWith('$ ')) commands.push({ command: text.slice(2), output: '' });
      else if (commands.length > 0) {
        const last = commands[commands.length - 1] as { command: string; output: string };
        last.output += `${text}\n`;
      }
    }
    return [{ kind: 'console', line, commands, numbersAside: marker(/^numbers aside$/) !== undefined }];
  }
  const background = marker(/^runs in the background; ready when it prints "(.*)"$/)?.[1];
  const statuses = marker(/^exit status: ([\d or]+?)(?: \(.*\))?$/)?.[1];
  return [
    {
      kind: 'run',
      line,
      script: block,
      ...(background === undefined ? {} : { background }),
      exitStatuses: statuses === undefined ? [0] : statuses.split(' or ').map(Number),
    },
  ];
}
