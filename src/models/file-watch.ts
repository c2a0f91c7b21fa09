import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';

/** A watch on one file; `close()` stops it and any change still waiting for its debounce. */
export interface FileWatch {
  close(): void;
}

/**
 * Whether a change to `changed` in the directory may change the file `name`: itself; any, when the
 * platform gives no name; or Kubernetes' `..data` link, which a ConfigMap or Secret update swaps
 * while `name` stays a link through it.
 */
function mayConcern(changed: string | null, name: string): boolean {
  return changed === null || changed === name || changed.startsWith('..');
}

/**
 * Calls `onChange` once a file has stopped changing for `debounceMs`. The file's directory is
 * watched, not the file: editors and deploy tools replace a file by renaming another over it,
 * and a watch on the old file would see nothing after the first replacement. Neither the watch
 * nor its timer keeps the process alive.
 */
export function watchFile(
  path: string,
  debounceMs: number,
  onChange: () => void,
  onError: (error: Error) => void,
): FileWatch {
  const name = basename(path);
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const watcher: FSWatcher = watch(dirname(path), { persistent: false }, (_event, filename) => {
    if (closed || !mayConcern(filename?.toString() ?? null, name)) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      if (!closed) onChange();
    }, debounceMs);
    timer.unref();
  });
  watcher.on('error', (error) => {
    if (!closed) onError(error);
  });
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      watcher.close();
    },
  };
}
