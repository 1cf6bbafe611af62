/**
 * What the same-run A/B benches against another build share: their `--base <checkout>` flags, the
 * alternating order of the two builds, and the medians of same-pass ratios (base / this build).
 */
import { median } from './autoscale-support';

/** One measured pass of one build, numbered `pass` (the builds alternate within a pass number). */
export interface AbPass {
  build: string;
  pass: number;
}

/**
 * Options from `--kebab-case value` flags over `defaults` (numbers, `base` a path); throws on an
 * unknown flag or a missing `--base`.
 */
export function parseAbOptions<T extends { base: string }>(argv: string[], defaults: T): T {
  const o = { ...defaults };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '').replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    if (!(key in o)) throw new Error(`unknown flag ${argv[i]}`);
    const v = argv[i + 1];
    (o as Record<string, unknown>)[key] = key === 'base' ? v : Number(v);
  }
  if (!o.base) throw new Error('--base <checkout of the other build, with dist/> is required');
  return o;
}

/**
 * Runs `passes` passes of every build, the order flipping every pass (so neither build always
 * runs on a warmer machine), printing each result to stderr as it comes.
 */
export async function alternatePasses<B, P>(
  builds: readonly B[],
  passes: number,
  run: (build: B, pass: number) => Promise<P>,
): Promise<P[]> {
  const out: P[] = [];
  for (let n = 0; n < passes; n++)
    for (const b of n % 2 ? [...builds].reverse() : builds) {
      out.push(await run(b, n));
      process.stderr.write(`${JSON.stringify(out[out.length - 1])}\n`);
    }
  return out;
}

/** Per field: the median over pass numbers of base's value / this build's, to two decimals. */
export function baseOverThis<P extends AbPass>(
  passes: readonly P[],
  count: number,
  fields: ReadonlyArray<keyof P & string>,
): Record<string, number> {
  const ratio = (field: keyof P) =>
    median(
      Array.from({ length: count }, (_, n) => {
        const [a, b] = ['base', 'this'].map((name) => passes.find((p) => p.pass === n && p.build === name)!);
        return (a[field] as number) / Math.max(1e-9, b[field] as number);
      }),
    );
  return Object.fromEntries(fields.map((f) => [f, Math.round(ratio(f) * 100) / 100]));
}
