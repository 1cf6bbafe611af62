/** Durations in the API are Go-style strings like "90d", "2h30m", "500ms"; days are 24h. */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION_RE = /^(\d+(ms|s|m|h|d))+$/;

/** The pattern the CRD uses for every duration field (kept identical to the schema). */
export const DURATION_PATTERN = '^([0-9]+(ms|s|m|h|d))+$';

/** Parses a duration to milliseconds; returns undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  if (!DURATION_RE.test(text)) return undefined;
  let total = 0;
  for (const m of text.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(m[1]) * UNIT_MS[m[2]];
  return total;
}

/** Parses a duration that the caller already validated; throws on invalid input (programming error). */
export function durationMs(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new Error(`invalid duration ${JSON.stringify(text)}`);
  return ms;
}
