/**
 * Wiring of the declarative formats into the LineParser: the whole-pipeline formats (`kv`, `csv`,
 * `structured-data`) and the extra rules `auto` tries before its built-in detection. A payload rule
 * fires when its `match` does (a prefix of the payload, or a substring of the line); a
 * structured-data rule fires when the RFC 5424 header holds its SD-ID. A matched prefix is skipped.
 */
import type { ParseContext, PayloadParser } from './context';
import {
  compileCsv,
  compileKv,
  compileSd,
  hasSdElement,
  type CsvFormat,
  type KvFormat,
  type SdFormat,
} from './declarative';
import type { ParsedRecord } from './record';

/** One extra rule for `auto` (spec.parser.rules[]). */
export interface DeclarativeRule {
  name?: string;
  match?: { prefix?: string; contains?: string };
  kv?: KvFormat;
  csv?: CsvFormat;
  structuredData?: SdFormat;
}

/** A compiled structured-data mapping. */
export type CompiledSd = ReturnType<typeof compileSd>;

interface CompiledRule {
  prefix: Buffer | null;
  contains: Buffer | null;
  payload: PayloadParser | null;
  sd: CompiledSd | null;
}

/** The compiled rules, in order. */
export type CompiledRules = readonly CompiledRule[];

/** tryRules result when no rule matched (distinct from null = parsed, and from reasons). */
export const NO_RULE = '\u0000no_rule';

/** The payload parser of a declarative whole-pipeline format, or null for other formats. */
export function declarativeParser(
  format: string,
  o: { kv?: KvFormat; csv?: CsvFormat },
): PayloadParser | null {
  if (format === 'kv') {
    if (!o.kv) throw new RangeError('format kv needs parser.kv');
    return compileKv(o.kv);
  }
  if (format === 'csv') {
    if (!o.csv) throw new RangeError('format csv needs parser.csv');
    return compileCsv(o.csv);
  }
  return null;
}

/** The structured-data mapping of format structured-data (throws when absent). */
export function compileSdFormat(cfg: SdFormat | undefined): CompiledSd {
  if (!cfg) throw new RangeError('format structured-data needs parser.structuredData');
  return compileSd(cfg);
}

/** Compiles `auto`'s extra rules; throws on a rule with no or several formats, or without a match. */
export function compileRules(rules: readonly DeclarativeRule[]): CompiledRules {
  return rules.map((r, i) => {
    const kinds = [r.kv, r.csv, r.structuredData].filter((x) => x !== undefined).length;
    if (kinds !== 1) throw new RangeError(`parser.rules[${i}] needs exactly one of kv, csv, structuredData`);
    const prefix = r.match?.prefix ? Buffer.from(r.match.prefix, 'utf8') : null;
    const contains = r.match?.contains ? Buffer.from(r.match.contains, 'utf8') : null;
    if (!r.structuredData && !prefix && !contains)
      throw new RangeError(`parser.rules[${i}] needs match.prefix or match.contains`);
    return {
      prefix,
      contains,
      payload: r.kv ? compileKv(r.kv) : r.csv ? compileCsv(r.csv) : null,
      sd: r.structuredData ? compileSd(r.structuredData) : null,
    };
  });
}

function matches(rule: CompiledRule, buf: Buffer, p: number, e: number): boolean {
  if (rule.prefix !== null) {
    const n = rule.prefix.length;
    if (e - p < n || buf.compare(rule.prefix, 0, n, p, p + n) !== 0) return false;
  }
  if (rule.contains !== null) {
    const at = buf.indexOf(rule.contains, p);
    if (at < 0 || at + rule.contains.length > e) return false;
  }
  return true;
}

/** Runs the first matching rule: its result (null or a reason), or NO_RULE. */
export function tryRules(
  rules: CompiledRules,
  buf: Buffer,
  p: number,
  e: number,
  sdStart: number,
  sdEnd: number,
  rec: ParsedRecord,
  ctx: ParseContext,
): string | null {
  for (const rule of rules) {
    if (rule.sd !== null) {
      if (sdStart < 0 || !hasSdElement(buf, sdStart, sdEnd, rule.sd.sdId)) continue;
      if ((rule.prefix !== null || rule.contains !== null) && !matches(rule, buf, p, e)) continue;
      return rule.sd.parse(buf, sdStart, sdEnd, rec, ctx);
    }
    // A matched prefix is a marker, not data: the format reads what follows it.
    if (matches(rule, buf, p, e))
      return (rule.payload as PayloadParser)(buf, rule.prefix ? p + rule.prefix.length : p, e, rec, ctx);
  }
  return NO_RULE;
}
