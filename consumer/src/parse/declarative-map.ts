/**
 * The mapping half of the declarative formats (declarative.ts): which column a configured key
 * fills, vendor action words, delimiters, and storing one mapped value into the record
 * (timestamps as RFC 3339 / ISO or epoch digits, actions through the word table, the rest
 * through the standard kv targets).
 */
import type { ParseContext } from './context';
import { applyTarget, T } from './kv-apply';
import { KeywordTable } from './keywords';
import { BAD_TIMESTAMP } from './reasons';
import { ACTION_NAMES, ParsedRecord } from './record';
import { isDigit } from './bytes';
import { parseEpochDigits } from './time';
import { isoValueMs } from './vendor-clock';
import { MAPPABLE_COLUMNS } from '../../../common/src/parser-contract';

/** Target id of the `timestamp` mapping (not a standard kv target). */
export const T_TIMESTAMP = 99;

/** The one ASCII byte a delimiter/quote setting names (0 for empty); throws otherwise. */
export function byte(text: string | undefined, fallback: string, what: string): number {
  const t = text ?? fallback;
  if (t.length > 1 || (t.length === 1 && t.charCodeAt(0) > 126))
    throw new RangeError(`${what} must be one ASCII character`);
  return t.length === 0 ? 0 : t.charCodeAt(0);
}

/** The kv target id of a mappable column; throws for a column a mapping cannot fill. */
export function targetOf(column: string): number {
  if (column === 'timestamp') return T_TIMESTAMP;
  const t = (T as Record<string, number>)[column];
  if (t === undefined)
    throw new RangeError(`cannot map column "${column}" (one of ${MAPPABLE_COLUMNS.join(', ')})`);
  return t;
}

/** Our action names -> action numbers (the numbers are the names' positions). */
const ACTION_IDS: Record<string, number> = Object.fromEntries(ACTION_NAMES.map((name, id) => [name, id]));

/** Vendor action words -> action numbers (case-insensitive); null when none configured. */
export function actionTable(actions: Record<string, string> | undefined): KeywordTable | null {
  if (!actions || Object.keys(actions).length === 0) return null;
  return new KeywordTable(
    Object.entries(actions).map(([word, action]) => {
      const id = ACTION_IDS[action];
      if (id === undefined) throw new RangeError(`action "${word}" maps to unknown action "${action}"`);
      return [word, id] as [string, number];
    }),
    true,
  );
}

/** Stores one mapped value: timestamp, action through the table, or a standard column. */
export function store(
  target: number,
  actions: KeywordTable | null,
  rec: ParsedRecord,
  vb: Buffer,
  vs: number,
  ve: number,
  sc: boolean,
  ctx: ParseContext,
): string | null {
  if (target === T_TIMESTAMP) {
    if (ve <= vs || rec.timestamp === rec.timestamp) return null;
    const ms =
      isDigit(vb[vs]) && ve - vs >= 9 && isAllDigits(vb, vs, ve)
        ? parseEpochDigits(vb, vs, ve)
        : isoValueMs(vb, vs, ve, ctx.tz);
    if (ms !== ms) return BAD_TIMESTAMP;
    rec.timestamp = ms;
    return null;
  }
  if (target === T.action && actions !== null) {
    const a = actions.lookup(vb, vs, ve);
    if (a >= 0) {
      rec.action = a;
      return null;
    }
  }
  return applyTarget(target, rec, vb, vs, ve, sc);
}

function isAllDigits(b: Uint8Array, s: number, e: number): boolean {
  for (let i = s; i < e; i++) if (!isDigit(b[i])) return false;
  return true;
}
