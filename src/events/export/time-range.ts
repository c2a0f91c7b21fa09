const UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/;

/** A duration such as `90s`, `30m`, `24h`, `7d` in ms, or undefined when `text` is not one. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * (UNITS[match[2] as string] as number);
}

/**
 * A point in time in ms since the epoch: an ISO 8601 date or date-time (`2024-05-01`,
 * `2024-05-01T12:00:00Z`), ms since the epoch (digits only), or a duration meaning that long
 * before `now` (`24h` = a day ago). Undefined when it is none of these.
 */
export function parseTime(text: string, now: number): number | undefined {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const ago = parseDuration(trimmed);
  if (ago !== undefined) return now - ago;
  // Date.parse accepts many shapes; requiring a leading year keeps `May 1` and `1/5` out.
  if (!/^\d{4}-\d{2}-\d{2}/.test(trimmed)) return undefined;
  const ms = Date.parse(trimmed);
  return Number.isNaN(ms) ? undefined : ms;
}
