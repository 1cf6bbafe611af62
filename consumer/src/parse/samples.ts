/**
 * Sample traffic generator: realistic lines per format, a weighted vendor mix (`mix`), and a share
 * of malformed lines made by mutating valid ones. Deterministic from a seed. Used by the parse
 * benchmark, the fuzz test, the demo and the end-to-end benchmarks.
 */
import {
  asaLine,
  cefLine,
  fortigateLine,
  iptablesLine,
  jsonLine,
  paloAltoLine,
  rfc3164Line,
  rfc5424Line,
  Rng,
} from './sample-formats';
import type { FormatName } from './record';
import {
  checkpointLine,
  huaweiLine,
  juniperLine,
  mikrotikLine,
  pfsenseLine,
  sonicwallLine,
  sophosLine,
} from './sample-formats-more';

export { Rng } from './sample-formats';

type LineMaker = (r: Rng, ms: number) => string;

/** Line makers by format name. */
export const SAMPLE_MAKERS: Record<FormatName, LineMaker> = {
  fortigate: fortigateLine,
  paloalto: paloAltoLine,
  'cisco-asa': asaLine,
  iptables: iptablesLine,
  cef: cefLine,
  json: jsonLine,
  rfc5424: rfc5424Line,
  rfc3164: rfc3164Line,
  pfsense: pfsenseLine,
  'juniper-srx': juniperLine,
  'huawei-usg': huaweiLine,
  sophos: sophosLine,
  sonicwall: sonicwallLine,
  checkpoint: checkpointLine,
  mikrotik: mikrotikLine,
};

/** Vendor weights of the `mix` traffic (an ISP edge: mostly firewall session logs). */
export const MIX_WEIGHTS: ReadonlyArray<readonly [FormatName, number]> = [
  ['fortigate', 35],
  ['paloalto', 20],
  ['cisco-asa', 20],
  ['iptables', 10],
  ['cef', 7],
  ['json', 4],
  ['rfc5424', 2],
  ['rfc3164', 2],
];

/** Options of generateSampleLines. */
export interface SampleOptions {
  /** PRNG seed. Default 1. */
  seed?: number;
  /** Fraction of lines replaced by mutated (usually invalid) lines. Default 0. */
  malformedRatio?: number;
  /** Clock of the first line (epoch ms); lines advance ~1 ms each. Default 2024-01-15T10:00:00Z. */
  startMs?: number;
}

function pickFormat(r: Rng): FormatName {
  let x = r.next() * 100;
  for (const [format, weight] of MIX_WEIGHTS) {
    x -= weight;
    if (x < 0) return format;
  }
  return 'fortigate';
}

/**
 * `count` sample lines (bytes, no trailing newline) of one format or of the vendor `mix`. Buffers,
 * not strings, so malformed lines keep their invalid UTF-8 bytes.
 */
export function generateSampleLines(
  format: FormatName | 'mix' | 'auto',
  count: number,
  options: SampleOptions = {},
): Buffer[] {
  const r = new Rng(options.seed ?? 1);
  const malformed = options.malformedRatio ?? 0;
  let ms = options.startMs ?? Date.UTC(2024, 0, 15, 10, 0, 0);
  const lines: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    ms += r.int(0, 2);
    const f = format === 'mix' || format === 'auto' ? pickFormat(r) : format;
    const line = Buffer.from(SAMPLE_MAKERS[f](r, ms), 'utf8');
    lines.push(malformed > 0 && r.chance(malformed) ? mutateLine(line, r, false) : line);
  }
  return lines;
}

const INSERTS = [0x22, 0x5c, 0x00, 0x3d, 0x7c, 0x2c, 0x20, 0x09, 0x0d, 0xff, 0xc3, 0x5b, 0x5d, 0x7b];

let workspace = Buffer.allocUnsafe(1 << 16);

/**
 * A mutated copy of a line: truncation, byte flips, inserted quotes/backslashes/NULs/invalid
 * UTF-8, deleted spans or duplicated spans. With `allowNewline` it may also insert line feeds.
 */
export function mutateLine(line: Uint8Array, r: Rng, allowNewline = true): Buffer {
  // Room for every growth the rounds can cause (an insert adds a byte, a duplication doubles).
  if (workspace.length < line.length * 16 + 8) workspace = Buffer.allocUnsafe(line.length * 16 + 8);
  let b = workspace;
  let n = line.length;
  b.set(line);
  const rounds = r.int(1, 4);
  for (let k = 0; k < rounds && n > 0; k++) {
    const at = r.int(0, n - 1);
    switch (r.int(0, 5)) {
      case 0:
        n = at;
        break;
      case 1:
        b[at] ^= 1 << r.int(0, 7);
        break;
      case 2:
        b.copyWithin(at + 1, at, n++);
        b[at] = allowNewline && r.chance(0.2) ? 0x0a : r.pick(INSERTS);
        break;
      case 3: {
        const want = r.int(1, 20);
        const cut = want < n - at ? want : n - at;
        b.copyWithin(at, at + cut, n);
        n -= cut;
        break;
      }
      case 4: {
        const from = r.int(0, at);
        const copy = Buffer.from(b.subarray(from, n));
        b.set(copy, at);
        n = at + copy.length;
        break;
      }
      default:
        b[at] = r.int(0, 255);
    }
  }
  b = b.subarray(0, n);
  if (!allowNewline) for (let i = 0; i < n; i++) if (b[i] === 0x0a) b[i] = 0x20;
  return Buffer.from(b);
}

/** Random bytes of random length (0..maxLength), for fuzzing. */
export function randomBytes(r: Rng, maxLength: number): Buffer {
  const b = Buffer.allocUnsafe(r.int(0, maxLength));
  for (let i = 0; i < b.length; i++) b[i] = r.chance(0.7) ? r.int(32, 126) : r.int(0, 255);
  return b;
}
