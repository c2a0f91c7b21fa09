import { access, mkdir } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { EntityOf, EntityType } from '../entities/define-entity.js';
import { AppDefinitionError, AppMisuseError, ModelInvalidError } from '../errors/index.js';
import { reportModelReload } from '../observability/model-reloads.js';
import type { RankdRequest } from '../request/component.js';
import {
  CONSOLE_LOGGER,
  type ComponentContext,
  disposeComponents,
  initializeComponents,
} from '../request/component.js';
import type { Model, Scores } from './define-model.js';
import { explainWith } from './explain/explain-model.js';
import type { Explanation } from './explain/explanation.js';
import { type FileWatch, watchFile } from './file-watch.js';
import { type ModelFile, modelPath, readFailure, readModelFile } from './model-file.js';
import { explainingSnapshotOf, type ModelSnapshot, type SnapshotSource, snapshotOf } from './snapshot.js';

async function fileExists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

type MaybePromise<T> = T | Promise<T>;

/** How long a model file must stay unchanged before it is reloaded: a copy in progress is not read. */
const DEFAULT_RELOAD_DEBOUNCE_MS = 200;

/** Options every file-backed model takes. */
export interface FileModelOptions<E extends EntityType = EntityType> {
  /** Shown in MODEL events and in the admin reload route. */
  name: string;
  /**
   * The model file: a `file:` URL, or a path relative to the project root when the rankd CLI loads
   * the app (the nearest directory above the app module with a package.json), else to the working directory.
   */
  file: string | URL;
  /** Reload when the file changes. @defaultValue `true` */
  watch?: boolean;
  /** How long the file must stay unchanged before a reload. @defaultValue 200 (ms) */
  debounceMs?: number;
  /** Only types `score`'s entities. */
  entity?: E;
  /**
   * Scores while the file does not exist yet (e.g. a hand-weighted model until `rankd train
   * --promote` writes a trained one): the model then starts without its file, watches for it and
   * loads it when it appears; a file removed later hands scoring back to it. Without it, a missing
   * file stops the start, and a removed one leaves the loaded version serving.
   */
  whenMissing?: Model<E>;
}

/** What one kind of file model (linear, GBDT, ONNX) does with its files. */
interface FileModelKind<T> {
  /** What the files are, e.g. `gbdt` (how `rankd train` finds the stage it can train). */
  readonly format?: string;
  /**
   * Turns a file into an evaluator, or throws an Error saying what is wrong (made a ModelInvalidError
   * naming the file). `context`: what `initialize()` was given.
   */
  load(file: ModelFile, context: ComponentContext): MaybePromise<T>;
  score(evaluator: T, entities: readonly object[], request: RankdRequest): MaybePromise<Scores>;
  /**
   * Scores and explains a batch (see `Model.explain`). `file` is the file `evaluator` was loaded
   * from, for kinds that build what explanations need from it only when first asked. Without
   * it, explanations give the inputs and scores only.
   */
  explain?(
    evaluator: T,
    entities: readonly object[],
    request: RankdRequest,
    file: ModelFile,
  ): MaybePromise<readonly Explanation[]>;
  /** Frees an evaluator that a reload replaced, once the last request using it is done. */
  release?(evaluator: T): MaybePromise<void>;
}

/** What a reload did. */
export interface ReloadResult {
  readonly name: string;
  readonly file: string;
  /** `unchanged`: the file has the bytes already loaded, nothing was swapped. */
  readonly status: 'reloaded' | 'failed' | 'unchanged';
  /** The version serving after the reload: the new one, or the kept one. */
  readonly version: string | null;
  /** Why a failed reload failed; the previous version keeps serving. */
  readonly error?: string;
}

/**
 * A model whose parameters come from a file, reloaded when the file changes. See docs/reference/models.md.
 */
export interface FileModel<E extends EntityType = EntityType> extends Model<E>, SnapshotSource {
  readonly kind: 'file-model';
  /** What its files are: `linear`, `gbdt`, `onnx`, or `file` for other kinds. */
  readonly format: string;
  /** The file's input columns in order (`features` adds those of {@link whenMissing}). */
  readonly inputs: readonly string[];
  /** The model scoring while the file does not exist (see `FileModelOptions.whenMissing`). */
  readonly whenMissing: Model<E> | undefined;
  /**
   * Whether {@link whenMissing} scores now: the file is absent (it never existed, or it was
   * removed) or has not loaded since it appeared. Always false without `whenMissing`.
   */
  readonly usingFallback: boolean;
  /** Absolute path of the model file. */
  readonly file: string;
  readonly features: readonly string[];
  /** The version serving: from the file's mtime, size and content hash; undefined before `initialize()`. */
  readonly version: string | undefined;
  /** The outcome of the latest reload (by watch or by the admin route). */
  readonly lastReload: ReloadResult | undefined;
  /** Scores and explains a batch with the version serving (see `Model.explain`). */
  explain(entities: ReadonlyArray<EntityOf<E>>, request: RankdRequest): Promise<readonly Explanation[]>;
  /** Loads the file again and swaps it in if it loads; never rejects. */
  reload(): Promise<ReloadResult>;
  /** Loads the file (once; later calls return the same promise) and starts watching it. */
  initialize(context?: ComponentContext): Promise<void>;
  /** Stops watching; the loaded file is freed once no request uses it. */
  dispose(): Promise<void>;
}

/** Whether a component is a {@link FileModel}. */
export function isFileModel(value: unknown): value is FileModel {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'file-model';
}

/** One loaded file: the evaluator and who still uses it. */
interface Loaded<T> {
  readonly evaluator: T;
  readonly file: ModelFile;
  /** Snapshots taken and not yet done: requests scoring with it. */
  holds: number;
  /** Replaced (or the model closed): free it when `holds` falls to 0. */
  retired: boolean;
}

function reasonOf(error: unknown, path: string): string {
  const message = error instanceof Error ? error.message : String(error);
  // Loaders that name the file themselves (the GBDT parser) are not named twice.
  return message.startsWith(`${path}: `) ? message.slice(path.length + 2) : message;
}

/**
 * The hot-reload mechanism every file model shares. The loaded file is held in one field and
 * replaced in one assignment; a request takes it once, at the start of `score()`, so requests
 * in flight during a reload finish on the file they started with. A reload loads the new file
 * completely before swapping; if it fails, the old one stays and the result says why.
 */
class FileBackedModel<T, E extends EntityType> implements FileModel<E> {
  readonly kind = 'file-model' as const;
  readonly name: string;
  readonly file: string;
  readonly features: readonly string[];
  readonly format: string;
  readonly inputs: readonly string[];
  readonly whenMissing: Model<E> | undefined;
  readonly parts: readonly Model<E>[];
  #lastReload: ReloadResult | undefined;
  readonly #kind: FileModelKind<T>;
  readonly #watch: boolean;
  readonly #debounceMs: number;
  #current: Loaded<T> | undefined;
  #context: ComponentContext = { log: CONSOLE_LOGGER };
  #initialized: Promise<void> | undefined;
  #watcher: FileWatch | undefined;
  #disposed = false;
  /** Reloads run one after another: a watch and the admin route never load concurrently. */
  #reloads: Promise<unknown> = Promise.resolve();

  constructor(options: FileModelOptions<E>, features: readonly string[], kind: FileModelKind<T>) {
    this.name = options.name;
    this.file = modelPath(options.file);
    this.whenMissing = options.whenMissing;
    this.inputs = features;
    this.parts = this.whenMissing === undefined ? [] : [this.whenMissing];
    // The features of both: the pipeline reads what either may score with.
    this.features = [...new Set([...features, ...(this.whenMissing?.features ?? [])])];
    this.format = kind.format ?? 'file';
    this.#kind = kind;
    this.#watch = options.watch ?? true;
    this.#debounceMs = options.debounceMs ?? DEFAULT_RELOAD_DEBOUNCE_MS;
  }

  get version(): string | undefined {
    return this.#current?.file.version ?? (this.#missing ? this.#missingVersion() : undefined);
  }

  /** Whether the file is missing (at start, or removed since) and has not loaded since: {@link whenMissing} scores. */
  #missing = false;
  #fallbackStarted: Promise<void> | undefined;

  get usingFallback(): boolean {
    return this.#missing;
  }
  /** Why {@link whenMissing} scores, as explanations say it: the file's name only, no server path. */
  #fallbackReason = '';

  #missingVersion(): string {
    return `${this.whenMissing?.name}@${this.whenMissing?.version ?? '-'}`;
  }

  get lastReload(): ReloadResult | undefined {
    return this.#lastReload;
  }

  initialize(context?: ComponentContext): Promise<void> {
    this.#initialized ??= this.#initialize(context);
    return this.#initialized;
  }

  async #initialize(context?: ComponentContext): Promise<void> {
    if (context) this.#context = context;
    if (this.whenMissing !== undefined && !(await fileExists(this.file))) {
      await this.#startFallback();
      this.#missing = true;
      this.#fallbackReason = `${basename(this.file)} does not exist yet`;
      // The directory is watched: it must exist for the file to appear in it.
      await mkdir(dirname(this.file), { recursive: true });
      this.#context.log.info(
        `model ${this.name}: ${this.file} does not exist yet; ${this.whenMissing.name} scores until it does`,
      );
    } else this.#current = await this.#load();
    if (this.#watch && !this.#disposed) {
      this.#watcher = watchFile(
        this.file,
        this.#debounceMs,
        () => void this.reload(),
        (error) =>
          this.#context.log.warn(`model ${this.name}: watching ${this.file} failed: ${error.message}`),
      );
    }
  }

  async #load(): Promise<Loaded<T>> {
    let file: ModelFile;
    try {
      file = await readModelFile(this.file);
    } catch (error) {
      throw new ModelInvalidError(`cannot read model file ${this.file}: ${readFailure(error)}`, {
        file: this.file,
        cause: error,
      });
    }
    try {
      return { evaluator: await this.#kind.load(file, this.#context), file, holds: 0, retired: false };
    } catch (error) {
      throw new ModelInvalidError(`cannot load model file ${this.file}: ${reasonOf(error, this.file)}`, {
        file: this.file,
        cause: error,
      });
    }
  }

  #hold(loaded: Loaded<T>): Loaded<T> {
    loaded.holds++;
    return loaded;
  }

  #letGo(loaded: Loaded<T>): void {
    loaded.holds--;
    if (loaded.retired && loaded.holds === 0 && this.#kind.release) {
      Promise.resolve()
        .then(() => this.#kind.release?.(loaded.evaluator))
        .catch((error: unknown) =>
          this.#context.log.warn(
            `model ${this.name}: freeing version ${loaded.file.version} failed: ${error}`,
          ),
        );
    }
  }

  snapshot(): ModelSnapshot {
    const loaded = this.#current;
    if (loaded === undefined && this.#missing && this.whenMissing !== undefined)
      return snapshotOf(this.whenMissing);
    if (loaded === undefined)
      throw new AppMisuseError(
        `model ${this.name} is not loaded: await its initialize() (or the app's) before scoring with it`,
      );
    this.#hold(loaded);
    let done = false;
    return {
      version: loaded.file.version,
      score: (entities, request) => this.#kind.score(loaded.evaluator, entities, request),
      done: () => {
        if (done) return;
        done = true;
        this.#letGo(loaded);
      },
    };
  }

  async score(entities: ReadonlyArray<EntityOf<E>>, request: RankdRequest): Promise<Scores> {
    const snapshot = this.snapshot();
    try {
      return await snapshot.score(entities, request);
    } finally {
      snapshot.done();
    }
  }

  explainingSnapshot(): ModelSnapshot {
    // Read in the same synchronous step as `snapshot()` takes it: the same loaded version.
    const loaded = this.#current;
    if (loaded === undefined && this.#missing && this.whenMissing !== undefined)
      return this.#fallbackSnapshot(this.whenMissing);
    const snapshot = this.snapshot();
    const explain = this.#kind.explain;
    if (explain === undefined || loaded === undefined) return snapshot;
    return {
      ...snapshot,
      explain: (entities, request) => explain(loaded.evaluator, entities, request, loaded.file),
    };
  }

  /** A snapshot of the fallback whose explanations say that it scored in this model's place, and why. */
  #fallbackSnapshot(fallback: Model<E>): ModelSnapshot {
    const snapshot = explainingSnapshotOf(fallback);
    const marked = { model: fallback.name, reason: this.#fallbackReason };
    return {
      ...snapshot,
      explain: async (entities, request) =>
        (await explainWith(snapshot, fallback.features ?? [], entities, request)).map((row) => ({
          ...row,
          fallback: marked,
        })),
    };
  }

  async explain(
    entities: ReadonlyArray<EntityOf<E>>,
    request: RankdRequest,
  ): Promise<readonly Explanation[]> {
    const snapshot = this.explainingSnapshot();
    try {
      return await explainWith(snapshot, this.features, entities, request);
    } finally {
      snapshot.done();
    }
  }

  reload(): Promise<ReloadResult> {
    const result = this.#reloads.then(() => this.#reloadNow());
    this.#reloads = result;
    return result;
  }

  async #reloadNow(): Promise<ReloadResult> {
    const current = this.#current;
    const base = { name: this.name, file: this.file };
    if (current === undefined && this.#missing && !this.#disposed) return this.#loadAppeared();
    if (
      current !== undefined &&
      this.whenMissing !== undefined &&
      !this.#disposed &&
      !(await fileExists(this.file))
    )
      return await this.#fallBack(current);
    if (current === undefined || this.#disposed) {
      return this.#record({
        ...base,
        status: 'failed',
        version: current?.file.version ?? null,
        error: this.#disposed ? 'the model is closed' : 'the model is not loaded: initialize() has not run',
      });
    }
    let next: Loaded<T>;
    try {
      const file = await readModelFile(this.file).catch((error: unknown) => {
        throw new ModelInvalidError(`cannot read model file ${this.file}: ${readFailure(error)}`, {
          file: this.file,
        });
      });
      if (file.hash === current.file.hash)
        return this.#record({ ...base, status: 'unchanged', version: current.file.version });
      next = { evaluator: await this.#kind.load(file, this.#context), file, holds: 0, retired: false };
    } catch (error) {
      const reason = reasonOf(error, this.file);
      this.#context.log.warn(
        `model ${this.name}: reloading ${this.file} failed, version ${current.file.version} keeps serving: ${reason}`,
      );
      return this.#record({ ...base, status: 'failed', version: current.file.version, error: reason });
    }
    if (this.#disposed) {
      this.#retire(next);
      return this.#record({ ...base, status: 'failed', version: null, error: 'the model is closed' });
    }
    this.#current = next;
    this.#retire(current);
    this.#context.log.info(`model ${this.name}: loaded ${this.file}, version ${next.file.version}`);
    return this.#record({ ...base, status: 'reloaded', version: next.file.version });
  }

  /**
   * The file was removed: {@link whenMissing} scores again (started already: it was initialised
   * with this model), as if the file had never been there; requests in flight finish on the file.
   */
  async #fallBack(current: Loaded<T>): Promise<ReloadResult> {
    try {
      await this.#startFallback();
    } catch (error) {
      const reason = reasonOf(error, this.file);
      this.#context.log.warn(
        `model ${this.name}: ${this.file} was removed, but ${this.whenMissing?.name} did not start, version ${current.file.version} keeps serving: ${reason}`,
      );
      return this.#record({
        name: this.name,
        file: this.file,
        status: 'failed',
        version: current.file.version,
        error: reason,
      });
    }
    this.#current = undefined;
    this.#missing = true;
    this.#fallbackReason = `${basename(this.file)} was removed`;
    this.#retire(current);
    const version = this.#missingVersion();
    this.#context.log.info(
      `model ${this.name}: ${this.file} was removed; ${this.whenMissing?.name} scores until it is back`,
    );
    return this.#record({ name: this.name, file: this.file, status: 'reloaded', version });
  }

  /** Initialises {@link whenMissing} once, when it first has to score. */
  #startFallback(): Promise<void> {
    this.#fallbackStarted ??= initializeComponents(
      this.whenMissing === undefined ? [] : [this.whenMissing],
      this.#context,
    );
    return this.#fallbackStarted;
  }

  /** The file of a model that started without it: loaded once it appears; a failure keeps {@link whenMissing}. */
  async #loadAppeared(): Promise<ReloadResult> {
    const base = { name: this.name, file: this.file };
    const fallback = this.#missingVersion();
    if (!(await fileExists(this.file)))
      return this.#record({ ...base, status: 'unchanged', version: fallback });
    let next: Loaded<T>;
    try {
      next = await this.#load();
    } catch (error) {
      const reason = reasonOf(error, this.file);
      this.#context.log.warn(
        `model ${this.name}: loading ${this.file} failed, ${fallback} keeps serving: ${reason}`,
      );
      this.#fallbackReason = `${basename(this.file)} did not load (the server's log says why)`;
      return this.#record({ ...base, status: 'failed', version: fallback, error: reason });
    }
    if (this.#disposed) {
      this.#retire(next);
      return this.#record({ ...base, status: 'failed', version: null, error: 'the model is closed' });
    }
    this.#current = next;
    this.#missing = false;
    this.#context.log.info(`model ${this.name}: loaded ${this.file}, version ${next.file.version}`);
    return this.#record({ ...base, status: 'reloaded', version: next.file.version });
  }

  #retire(loaded: Loaded<T>): void {
    loaded.retired = true;
    // Held once more and let go, so a file nobody is using is freed now, by the usual path.
    this.#letGo(this.#hold(loaded));
  }

  #record(result: ReloadResult): ReloadResult {
    this.#lastReload = result;
    // Every attempt, whatever started it (the watch, the admin route), reaches the metrics.
    reportModelReload(this.name, result.status);
    return result;
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    await this.#initialized?.catch(() => undefined);
    this.#watcher?.close();
    await this.#reloads;
    if (this.#current) this.#retire(this.#current);
    if (this.whenMissing !== undefined) {
      const failures = await disposeComponents([this.whenMissing]);
      if (failures[0]) throw failures[0];
    }
  }
}

/** Makes a file model of one kind: the options, the features it reads and what to do with files. */
export function fileModel<T, E extends EntityType = EntityType>(
  options: FileModelOptions<E>,
  features: readonly string[],
  kind: FileModelKind<T>,
): FileModel<E> {
  if (typeof options.name !== 'string' || options.name === '')
    throw new AppDefinitionError('A file model needs a name');
  return new FileBackedModel(options, features, kind);
}
