import { basename, isAbsolute, relative, sep } from 'node:path';

/**
 * How a response names a file of the server: relative to the app's directory (the working
 * directory `rankd run` serves from) when it is inside it, else by its name alone. Responses never
 * show absolute paths: the server's directory layout is no caller's business.
 */
export function shownPath(file: string, root = process.cwd()): string {
  const inside = relative(root, file);
  return inside.length > 0 && !inside.startsWith(`..${sep}`) && inside !== '..' && !isAbsolute(inside)
    ? inside
    : basename(file);
}

/**
 * `text` with every absolute path of `files`, and the app's directory as a prefix (`<root>/`), shown
 * as {@link shownPath} shows them. The directory is left alone when it is `/`: every path is in it.
 */
export function withoutAbsolutePaths(
  text: string,
  files: readonly string[] = [],
  root = process.cwd(),
): string {
  let shown = text;
  for (const file of files) if (isAbsolute(file)) shown = shown.replaceAll(file, shownPath(file, root));
  const prefix = root.endsWith(sep) ? root : `${root}${sep}`;
  return prefix === sep ? shown : shown.replaceAll(prefix, '');
}
