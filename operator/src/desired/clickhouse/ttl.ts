/**
 * Table TTL: tiered moves and the final delete, built from the resolved retention durations, and a
 * parser for ClickHouse's own rendering of a TTL (`toIntervalDay(30)`, DELETE omitted) so that a
 * desired TTL and an observed one compare as values, not as text.
 */
import type { RetentionMove } from '../../api/types';
import { SchemaError, checkIdentifier, quoteIdentifier } from '../../../../common/src/sql/identifiers';

/** One TTL rule as a value: after `seconds` past the time column, move to a disk/volume or delete. */
export interface TtlRule {
  seconds: number;
  action: { kind: 'delete' } | { kind: 'disk'; name: string } | { kind: 'volume'; name: string };
}

const UNITS: ReadonlyArray<[string, number]> = [
  ['DAY', 86_400],
  ['HOUR', 3_600],
  ['MINUTE', 60],
  ['SECOND', 1],
];
const UNIT_SECONDS: Record<string, number> = {
  Second: 1,
  Minute: 60,
  Hour: 3600,
  Day: 86_400,
  Week: 604_800,
};

/** `INTERVAL n UNIT` in the largest unit that divides `seconds` exactly. */
export function renderInterval(seconds: number): string {
  const [unit, size] = UNITS.find(([, s]) => seconds % s === 0) ?? UNITS[UNITS.length - 1];
  return `INTERVAL ${seconds / size} ${unit}`;
}

function toSeconds(ms: number, what: string): number {
  if (!Number.isSafeInteger(ms) || ms <= 0 || ms % 1000 !== 0) {
    throw new SchemaError('InvalidRetention', `${what} must be a positive whole number of seconds`);
  }
  return ms / 1000;
}

/** Turns the resolved retention into ordered TTL rules; moves must come strictly before the delete. */
export function buildTtlRules(
  retention: { deleteAfterMs: number; moves: RetentionMove[] },
  parseMs: (d: string) => number | undefined,
): TtlRule[] {
  const deleteSeconds = toSeconds(retention.deleteAfterMs, 'retention.deleteAfter');
  const rules: TtlRule[] = retention.moves.map((move, i) => {
    const ms = parseMs(move.after);
    if (ms === undefined)
      throw new SchemaError('InvalidRetention', `retention.moves[${i}].after is not a duration`);
    const seconds = toSeconds(ms, `retention.moves[${i}].after`);
    if (seconds >= deleteSeconds) {
      throw new SchemaError(
        'InvalidRetention',
        `retention.moves[${i}].after must be shorter than retention.deleteAfter`,
      );
    }
    if ((move.toDisk === undefined) === (move.toVolume === undefined)) {
      throw new SchemaError(
        'InvalidRetention',
        `retention.moves[${i}] needs exactly one of toDisk and toVolume`,
      );
    }
    return move.toDisk !== undefined
      ? { seconds, action: { kind: 'disk' as const, name: checkIdentifier(move.toDisk, 'disk') } }
      : { seconds, action: { kind: 'volume' as const, name: checkIdentifier(move.toVolume, 'volume') } };
  });
  rules.sort((a, b) => a.seconds - b.seconds);
  rules.push({ seconds: deleteSeconds, action: { kind: 'delete' } });
  return rules;
}

/**
 * The TTL clause body. DateTime64 is wrapped in toDateTime() because servers before 23.x only accept
 * Date/DateTime TTL results; the move/delete instant is the same.
 */
export function renderTtl(rules: TtlRule[], timeColumn: string, isDateTime64: boolean): string {
  const quoted = quoteIdentifier(timeColumn, 'time column');
  const base = isDateTime64 ? `toDateTime(${quoted})` : quoted;
  return rules
    .map((r) => {
      const target =
        r.action.kind === 'delete'
          ? 'DELETE'
          : r.action.kind === 'disk'
            ? `TO DISK '${r.action.name}'`
            : `TO VOLUME '${r.action.name}'`;
      return `${base} + ${renderInterval(r.seconds)} ${target}`;
    })
    .join(', ');
}

/** Splits on commas outside parentheses and quotes. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'") quoted = !quoted;
    else if (!quoted && c === '(') depth++;
    else if (!quoted && c === ')') depth--;
    else if (!quoted && depth === 0 && c === ',') {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts.filter((p) => p.length > 0);
}

const RULE_RE =
  /^(.+?) \+ (?:toInterval(Second|Minute|Hour|Day|Week)\((\d+)\)|INTERVAL (\d+) (SECOND|MINUTE|HOUR|DAY|WEEK))(?: (DELETE|TO DISK '([^']*)'|TO VOLUME '([^']*)'))?$/;

/**
 * Parses a TTL as ClickHouse renders it (or as we write it) into rules plus the time expression;
 * returns undefined for anything else (WHERE/GROUP BY/RECOMPRESS TTLs), which then never compares equal.
 */
export function parseTtl(text: string): { expression: string; rules: TtlRule[] } | undefined {
  const rules: TtlRule[] = [];
  let expression: string | undefined;
  for (const part of splitTopLevel(text.replace(/\s+/g, ' ').trim())) {
    const m = RULE_RE.exec(part);
    if (!m) return undefined;
    const unit = m[2] ?? m[5][0] + m[5].slice(1).toLowerCase();
    const seconds = Number(m[3] ?? m[4]) * UNIT_SECONDS[unit];
    const expr = m[1].replace(/`/g, '');
    if (expression !== undefined && expression !== expr) return undefined;
    expression = expr;
    const action: TtlRule['action'] =
      m[7] !== undefined
        ? { kind: 'disk', name: m[7] }
        : m[8] !== undefined
          ? { kind: 'volume', name: m[8] }
          : { kind: 'delete' };
    rules.push({ seconds, action });
  }
  return expression === undefined ? undefined : { expression, rules };
}

/** True when two TTL texts mean the same rules on the same time expression. */
export function sameTtl(a: string, b: string): boolean {
  const pa = parseTtl(a);
  const pb = parseTtl(b);
  if (!pa || !pb) return false;
  const key = (p: { expression: string; rules: TtlRule[] }) =>
    JSON.stringify([p.expression, [...p.rules].sort((x, y) => x.seconds - y.seconds)]);
  return key(pa) === key(pb);
}
