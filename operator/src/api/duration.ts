/**
 * Durations in the API are Go-style strings like "90d", "1d12h", "2h30m", "500ms"; days are 24h.
 * A day count may only come first ("1d12h", not "12h1d"): admission rules convert durations in CEL,
 * whose duration() knows no days, by splitting at the single 'd' (see validate-rules.ts).
 */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The pattern the CRD uses for every duration field (kept identical to the schema). */
export const DURATION_PATTERN = '^([0-9]+d([0-9]+(ms|s|m|h))*|([0-9]+(ms|s|m|h))+)$';
const DURATION_RE = new RegExp(DURATION_PATTERN);

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
