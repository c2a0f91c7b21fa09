import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A model file as read once: its bytes and the version they make. */
export interface ModelFile {
  /** Absolute path. */
  readonly path: string;
  readonly bytes: Buffer;
  /** SHA-256 of the bytes, hex: two reads of the same content compare equal. */
  readonly hash: string;
  /**
   * `<mtime ISO>/<size>B/<first 12 hex of the SHA-256>`: recorded in MODEL events, so scores can
   * be traced to the file that made them; the hash tells two files with the same mtime apart.
   */
  readonly version: string;
}

/** Where relative model paths resolve while the CLI loads an app module: its project's root. */
let projectRoot: string | undefined;

/**
 * Runs `load` (the import of an app module) with relative model paths resolving against `root`:
 * the models an app defines when its module is evaluated take their files from its project,
 * wherever the command was started.
 */
export async function withModelRoot<T>(root: string, load: () => Promise<T>): Promise<T> {
  const previous = projectRoot;
  projectRoot = root;
  try {
    return await load();
  } finally {
    projectRoot = previous;
  }
}

/**
 * An absolute path for a model file option: a `file:` URL, or a path relative to the app's project
 * root when the rankd CLI loads the app ({@link withModelRoot}), else to the working directory.
 */
export function modelPath(file: string | URL): string {
  return typeof file === 'string' ? resolve(projectRoot ?? process.cwd(), file) : fileURLToPath(file);
}

/**
 * Reads a model file. Size, mtime and bytes come from one open descriptor, so a file replaced
 * while it is read (a rename over it) cannot give the old file's mtime with the new one's bytes.
 */
export async function readModelFile(path: string): Promise<ModelFile> {
  const handle = await open(path, 'r');
  try {
    const stat = await handle.stat();
    const bytes = await handle.readFile();
    const hash = createHash('sha256').update(bytes).digest('hex');
    return {
      path,
      bytes,
      hash,
      version: `${stat.mtime.toISOString()}/${bytes.length}B/${hash.slice(0, 12)}`,
    };
  } finally {
    await handle.close();
  }
}

/** Why a file could not be read, in words: "no such file" rather than an errno dump. */
export function readFailure(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return error instanceof Error ? error.message : String(error);
}
