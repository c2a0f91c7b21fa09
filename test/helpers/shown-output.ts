/**
 * Outputs as the docs show them, compared with what a command printed: JSON values as values (key
 * order and spacing free), other text line by line. In both, `…` stands for text that differs from
 * run to run (a path, a version, a status), never a quote or a line break; a block marked "numbers
 * aside" also takes any number, and any ISO time, for the one shown.
 */

/**
 * The JSON values in `text`, one after another (curl prints them with no line break between; the
 * docs may spread one over lines); undefined when `text` is not only JSON values.
 */
export function jsonValues(text: string): unknown[] | undefined {
  const values: unknown[] = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    if (char === '{' || char === '[') {
      if (depth === 0) start = i;
      depth++;
    } else if (char === '}' || char === ']') {
      depth--;
      if (depth === 0) {
        try {
          values.push(JSON.parse(text.slice(start, i + 1)));
        } catch {
          return undefined;
        }
      }
    } else if (depth === 0 && !/\s/.test(char ?? '')) return undefined;
  }
  return depth === 0 && values.length > 0 ? values : undefined;
}

/** `shown` as a pattern: `…` for any run of characters but a quote or a line break. */
function pattern(shown: string): RegExp {
  const parts = shown.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[^"\\n]*')}$`);
}

/** Numbers and ISO times made alike, for outputs shown "numbers aside". */
function withoutNumbers(text: string): string {
  return text.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>').replace(/\d[\d,]*(\.\d+)?/g, '#');
}

/** Whether the JSON value `actual` is `shown`, where a shown string with `…` is a pattern. */
function matchesValue(shown: unknown, actual: unknown): boolean {
  if (typeof shown === 'string' && shown.includes('…'))
    return typeof actual === 'string' && pattern(shown).test(actual);
  if (Array.isArray(shown))
    return (
      Array.isArray(actual) &&
      actual.length === shown.length &&
      shown.every((value, i) => matchesValue(value, actual[i]))
    );
  if (typeof shown === 'object' && shown !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
    const keys = Object.keys(shown);
    if (keys.length !== Object.keys(actual).length) return false;
    return keys.every(
      (key) =>
        Object.hasOwn(actual, key) &&
        matchesValue((shown as Record<string, unknown>)[key], (actual as Record<string, unknown>)[key]),
    );
  }
  return Object.is(shown, actual);
}

/** Undefined when `actual` is the output `shown` shows, else why not. */
export function outputMismatch(shown: string, actual: string, numbersAside = false): string | undefined {
  const shownValues = numbersAside ? undefined : jsonValues(shown);
  if (shownValues !== undefined) {
    const actualValues = jsonValues(actual);
    if (actualValues === undefined) return 'the page shows JSON; the command printed other text';
    return matchesValue(shownValues, actualValues) ? undefined : 'the JSON printed is not the JSON shown';
  }
  const lines = (text: string) => {
    const all = (numbersAside ? withoutNumbers(text) : text).split('\n').map((line) => line.trimEnd());
    while (all.length > 0 && all.at(-1) === '') all.pop();
    return all;
  };
  const expected = lines(shown);
  const got = lines(actual);
  if (expected.length !== got.length) return `${got.length} lines printed, ${expected.length} shown`;
  for (const [i, line] of expected.entries())
    if (!pattern(line).test(got[i] ?? '')) return `line ${i + 1} differs: shown ${JSON.stringify(line)}`;
  return undefined;
}
