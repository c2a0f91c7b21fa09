/**
 * JSON built as text, so that what JavaScript values cannot hold reaches the server exactly as
 * generated: numbers such as `1e400` or `123456789012345678901234567890`, duplicate keys, and
 * `__proto__` keys (an object literal would set the prototype instead of a key).
 */

/** JSON text inserted as is: a number literal JavaScript would round, or deliberately broken JSON. */
export class Raw {
  constructor(readonly text: string) {}
}

/** An object written from its entries, in order, duplicates and `__proto__` kept. */
export class Entries {
  constructor(readonly entries: ReadonlyArray<readonly [string, Json]>) {}
}

/** A value {@link toJsonText} can write. */
export type Json = null | boolean | number | string | Raw | Entries | Json[] | { [key: string]: Json };

/**
 * The JSON text of `value`. Strings go through JSON.stringify, which escapes unpaired surrogates
 * as `\ud800`: the bytes on the wire are valid UTF-8 and the server's parser sees the surrogate.
 * Recursion depth is the nesting the generators build (a few levels); deep nesting is made as
 * text ({@link deepText}), never as a value.
 */
export function toJsonText(value: Json): string {
  if (value instanceof Raw) return value.text;
  if (value instanceof Entries)
    return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .map((k) => `${JSON.stringify(k)}:${toJsonText(value[k] ?? null)}`)
      .join(',')}}`;
  // JSON.stringify writes NaN and ±Infinity as null: generators use Raw for those on purpose.
  return JSON.stringify(value);
}

/** `depth` nested arrays (`[[[…]]]`) or objects (`{"a":{"a":…1}}`) around `inner`. */
export function deepText(depth: number, arrays: boolean, inner = '1'): Raw {
  return new Raw(
    arrays
      ? '['.repeat(depth) + inner + ']'.repeat(depth)
      : `${'{"a":'.repeat(depth)}${inner}${'}'.repeat(depth)}`,
  );
}

/** One step into a JSON value: an object key or an array index. */
export type PathStep = string | number;

/** Every path to a value inside `value` (the root included, as []), depth first. */
export function pathsOf(value: Json, prefix: PathStep[] = []): PathStep[][] {
  const paths: PathStep[][] = [prefix];
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) paths.push(...pathsOf(item, [...prefix, i]));
  } else if (isPlainObject(value))
    for (const key of Object.keys(value)) paths.push(...pathsOf(value[key] ?? null, [...prefix, key]));
  return paths;
}

/** Whether `value` is a plain object of {@link Json} (not Raw, not Entries, not an array). */
export function isPlainObject(value: Json): value is { [key: string]: Json } {
  // Not `value.constructor`: a generated object may have an own key "constructor".
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.getPrototypeOf(value) === Object.prototype
  );
}

/**
 * A copy of `root` where the value at `path` is replaced by what `change` returns given the old
 * value (`undefined` from `change` removes it from its object or array). Copies only along `path`.
 */
export function updateAt(
  root: Json,
  path: readonly PathStep[],
  change: (old: Json) => Json | undefined,
): Json {
  const [step, ...rest] = path;
  if (step === undefined) return change(root) ?? null;
  if (Array.isArray(root) && typeof step === 'number') {
    const copy = [...root];
    const next = rest.length === 0 ? change(root[step] ?? null) : updateAt(root[step] ?? null, rest, change);
    if (next === undefined) copy.splice(step, 1);
    else copy[step] = next;
    return copy;
  }
  if (isPlainObject(root) && typeof step === 'string') {
    const copy: { [key: string]: Json } = { ...root };
    const next = rest.length === 0 ? change(root[step] ?? null) : updateAt(root[step] ?? null, rest, change);
    if (next === undefined) delete copy[step];
    else copy[step] = next;
    return copy;
  }
  return root;
}
