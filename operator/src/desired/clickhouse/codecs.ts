/**
 * Column codec chains, checked against a whitelist with numeric arguments only. The rules mirror
 * what ClickHouse enforces without `allow_suspicious_codecs`: specialised codecs (Delta, DoubleDelta,
 * T64 on fixed-width integer/time types; Gorilla on floats only) come first, at most one of the delta
 * family (Gorilla deltas implicitly); at most one general-purpose compressor (ZSTD, LZ4, LZ4HC), last.
 */
import { SchemaError } from '../../../../common/src/sql/identifiers';
import { isIntegerType, type ChType } from './type-grammar';

interface CodecRule {
  /** Allowed numeric argument range, or undefined when the codec takes none. */
  arg?: { min: number; max: number; optional: boolean; allowed?: number[] };
  general: boolean;
  /** Which column types it applies to (general-purpose codecs apply to all). */
  appliesTo?: (t: ChType) => boolean;
}

const CODEC_RULES: Record<string, CodecRule> = {
  Delta: {
    arg: { min: 1, max: 8, optional: true, allowed: [1, 2, 4, 8] },
    general: false,
    appliesTo: isFixedWidthNumeric,
  },
  DoubleDelta: { general: false, appliesTo: isFixedWidthNumeric },
  Gorilla: { general: false, appliesTo: isFloatType },
  T64: { general: false, appliesTo: isT64Type },
  ZSTD: { arg: { min: 1, max: 22, optional: true }, general: true },
  LZ4: { general: true },
  LZ4HC: { arg: { min: 1, max: 12, optional: true }, general: true },
};

const DELTA_FAMILY = new Set(['Delta', 'DoubleDelta', 'Gorilla']);
const CODEC_RE = /^([A-Za-z0-9]+)(?:\((\d{1,2})\))?$/;

/** Types whose values have a fixed width of 1..8 bytes, the domain of delta/XOR codecs. */
function isFixedWidthNumeric(t: ChType): boolean {
  const base = t.kind === 'nullable' ? t.inner : t;
  if (base.kind === 'dateTime' || base.kind === 'dateTime64' || base.kind === 'enum') return true;
  if (base.kind === 'decimal') return base.precision <= 18;
  if (base.kind !== 'simple') return false;
  return /^(U?Int(8|16|32|64)|Float32|Float64|Date|Date32|IPv4)$/.test(base.name);
}

function isFloatType(t: ChType): boolean {
  const base = t.kind === 'nullable' ? t.inner : t;
  return base.kind === 'simple' && (base.name === 'Float32' || base.name === 'Float64');
}

function isT64Type(t: ChType): boolean {
  const base = t.kind === 'nullable' ? t.inner : t;
  if (base.kind === 'dateTime' || base.kind === 'dateTime64' || base.kind === 'enum') return true;
  if (base.kind === 'decimal') return base.precision <= 18;
  return (
    base.kind === 'simple' &&
    ((isIntegerType(base) && !/(128|256)$/.test(base.name)) || base.name === 'Date' || base.name === 'Date32')
  );
}

function parseOneCodec(
  text: unknown,
  type: ChType,
  column: string,
): { name: string; rendered: string; general: boolean } {
  const m = typeof text === 'string' ? CODEC_RE.exec(text) : null;
  const rule = m ? CODEC_RULES[m[1]] : undefined;
  if (!m || !rule) {
    throw new SchemaError(
      'InvalidCodec',
      `column ${column}: codec ${JSON.stringify(text)} is not one of ${Object.keys(CODEC_RULES).join(', ')} (with an optional numeric argument)`,
    );
  }
  const [, name, argText] = m;
  if (argText !== undefined) {
    const arg = Number(argText);
    const spec = rule.arg;
    if (!spec || arg < spec.min || arg > spec.max || (spec.allowed && !spec.allowed.includes(arg))) {
      throw new SchemaError('InvalidCodec', `column ${column}: codec ${text} has an invalid argument`);
    }
  } else if (rule.arg && !rule.arg.optional) {
    throw new SchemaError('InvalidCodec', `column ${column}: codec ${name} needs an argument`);
  }
  if (rule.appliesTo && !rule.appliesTo(type)) {
    throw new SchemaError('InvalidCodec', `column ${column}: codec ${name} does not apply to its type`);
  }
  return {
    name,
    rendered: argText === undefined ? name : `${name}(${Number(argText)})`,
    general: rule.general,
  };
}

/** Validates a codec chain for a column of `type`; returns the rendered codecs (empty when none). */
export function validateCodecs(codecs: unknown, type: ChType, column: string): string[] {
  if (codecs === undefined) return [];
  if (!Array.isArray(codecs) || codecs.length > 4) {
    throw new SchemaError('InvalidCodec', `column ${column}: codec must be a list of at most 4 codecs`);
  }
  const parsed = codecs.map((c) => parseOneCodec(c, type, column));
  parsed.forEach((c, i) => {
    if (c.general && i !== parsed.length - 1) {
      throw new SchemaError(
        'InvalidCodec',
        `column ${column}: the general-purpose codec ${c.name} must be last and only one`,
      );
    }
  });
  const deltaFamily = parsed.filter((c) => DELTA_FAMILY.has(c.name)).length;
  if (deltaFamily > 1 || parsed.filter((c) => c.name === 'T64').length > 1) {
    throw new SchemaError(
      'InvalidCodec',
      `column ${column}: at most one of Delta, DoubleDelta, Gorilla and one T64`,
    );
  }
  return parsed.map((c) => c.rendered);
}

/** Renders ` CODEC(a, b)` for a validated chain, or '' when the chain is empty. */
export function renderCodecClause(codecs: string[]): string {
  return codecs.length === 0 ? '' : ` CODEC(${codecs.join(', ')})`;
}
