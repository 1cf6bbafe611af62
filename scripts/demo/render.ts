/**
 * The demo's terminal output, pure: a live multi-line view (sparklines, progress bars, conditions;
 * ANSI colours optional) repainted in place, and a single plain line for logs and CI.
 */
import type { DemoView, ViewCondition } from './stats';

/** How the live view is drawn. */
export interface RenderOptions {
  /** Terminal columns; lines are cut to fit so repainting never wraps. */
  width: number;
  color: boolean;
  /** `namespace/name` of the pipeline. */
  title: string;
}

const SPARKS = '▁▂▃▄▅▆▇█';
const ESC = '\x1b[';
const ANSI_RE = /\x1b\[[0-9;]*[A-Za-z]/g;

/** 1234567 -> "1,234,567" (locale-independent, so tests and logs look the same everywhere). */
export function formatInt(n: number): string {
  const s = String(Math.round(Math.abs(n)));
  const grouped = s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return n < 0 ? `-${grouped}` : grouped;
}

/** Bytes with a binary unit: "12.3 MiB". */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(1)} ${units[u]}`;
}

/** Milliseconds as "mm:ss" (or "h:mm:ss" from one hour on). */
export function formatClock(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = String(Math.floor((total % 3600) / 60)).padStart(2, '0');
  const s = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}:${m}:${s}` : `${m}:${s}`;
}

/** Unicode sparkline of the last `width` values, scaled to their maximum (all-zero: flat floor). */
export function sparkline(values: readonly number[], width: number): string {
  const tail = values.slice(-width);
  const max = Math.max(0, ...tail);
  const chars = tail.map((v) =>
    max <= 0 ? SPARKS[0] : SPARKS[Math.min(7, Math.round((Math.max(0, v) / max) * 7))],
  );
  return chars.join('').padStart(width, ' ');
}

/** Progress bar of `fraction` (clamped to 0..1) in `width` cells. */
export function bar(fraction: number, width: number): string {
  const f = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0));
  const full = Math.round(f * width);
  return '█'.repeat(full) + '░'.repeat(width - full);
}

/** Visible width of a string holding ANSI escape sequences. */
export function visibleLength(text: string): number {
  return [...text.replace(ANSI_RE, '')].length;
}

/** Cuts `text` to `width` visible columns, keeping escape sequences intact. */
export function fit(text: string, width: number): string {
  if (visibleLength(text) <= width) return text;
  let out = '';
  let seen = 0;
  for (let i = 0; i < text.length && seen < width;) {
    ANSI_RE.lastIndex = i;
    const m = ANSI_RE.exec(text);
    if (m && m.index === i) {
      out += m[0];
      i += m[0].length;
      continue;
    }
    const ch = String.fromCodePoint(text.codePointAt(i)!);
    out += ch;
    i += ch.length;
    seen++;
  }
  return out + (out.includes(ESC) ? `${ESC}0m` : '');
}

function paint(color: boolean, code: string, text: string): string {
  return color ? `${ESC}${code}m${text}${ESC}0m` : text;
}

function conditionMark(c: ViewCondition, color: boolean): string {
  // Scaling=True means "is scaling now": informative, not a failure.
  if (c.type === 'Scaling') return paint(color, '36', c.status === 'True' ? '↻' : '·');
  if (c.status === 'True') return paint(color, '32', '✔');
  return c.status === 'False' ? paint(color, '31', '✘') : paint(color, '33', '?');
}

const ORDER = ['Ready', 'TopicReady', 'TableReady', 'WorkersReady', 'Scaling'];

/** Conditions in a stable order: the well-known ones first, then the rest alphabetically. */
export function sortConditions(conditions: readonly ViewCondition[]): ViewCondition[] {
  const rank = (t: string) => (ORDER.includes(t) ? ORDER.indexOf(t) : ORDER.length);
  return [...conditions].sort((a, b) => rank(a.type) - rank(b.type) || a.type.localeCompare(b.type));
}

function lagLine(v: DemoView): string {
  if (v.lagMessages === undefined && v.statusLag === undefined) return 'lag        (not known yet)';
  const msgs = v.lagMessages ?? v.statusLag ?? 0;
  // A second's worth of production is the yardstick: a full bar means a second or more behind.
  const perSecond = Math.max(1, v.targetRate / v.linesPerMessage);
  const operator = v.statusLag === undefined ? '' : `   operator sees ${formatInt(v.statusLag)}`;
  return `lag        ${formatInt(msgs).padStart(9)} msgs (~${formatInt(msgs * v.linesPerMessage)} lines)  ${bar(msgs / perSecond, 10)}${operator}`;
}

function replicasLine(v: DemoView): string {
  const n = (x: number | undefined) => (x === undefined ? '-' : String(x));
  return `replicas   desired ${n(v.replicasDesired)}  current ${n(v.replicasCurrent)}  ready ${n(v.replicasReady)}   (max seen ${v.maxReplicasSeen})`;
}

/** The live view as lines (no trailing newline), each at most `opts.width` columns. */
export function renderLive(v: DemoView, opts: RenderOptions): string[] {
  const c = opts.color;
  const progress = Math.min(1, v.elapsedMs / v.durationMs);
  const phase = paint(c, v.phase === 'producing' ? '32' : '33', v.phase);
  const sparkWidth = Math.max(8, Math.min(30, opts.width - 60));
  const stored = v.insertedRows + v.deadLetters;
  const dlqShare = v.producedLines > 0 ? ((v.deadLetters / v.producedLines) * 100).toFixed(2) : '0.00';
  const lines = [
    `${paint(c, '1', 'logpipeline demo')} ${opts.title}   ${phase} ${formatClock(v.elapsedMs)} / ${formatClock(v.durationMs)} ${bar(progress, 20)}`,
    '',
    `produced   ${formatInt(v.producedRate).padStart(9)} lines/s ${sparkline(v.producedHistory, sparkWidth)}  target ${formatInt(v.targetRate)}/s`,
    `inserted   ${formatInt(v.insertedRate).padStart(9)} lines/s ${sparkline(v.insertedHistory, sparkWidth)}`,
    `totals     produced ${formatInt(v.producedLines)} lines in ${formatInt(v.producedMessages)} msgs (${formatBytes(v.producedBytes)})`,
    `           inserted ${formatInt(v.insertedRows)} rows, dead-lettered ${formatInt(v.deadLetters)} (${dlqShare}%)  ${bar(v.producedLines > 0 ? stored / v.producedLines : 0, 20)}`,
    ...(v.extraLines ?? []),
    lagLine(v),
    replicasLine(v),
    '',
    'conditions',
  ];
  const conditions = sortConditions(v.conditions);
  if (conditions.length === 0) lines.push('  (none reported yet)');
  for (const cond of conditions) {
    const detail = cond.message ? `  ${cond.message}` : '';
    lines.push(
      `  ${conditionMark(cond, c)} ${cond.type.padEnd(13)} ${cond.status.padEnd(7)} ${cond.reason}${detail}`,
    );
  }
  for (const err of v.errors) lines.push(paint(c, '33', `! ${err}`));
  lines.push(
    '',
    paint(
      c,
      '2',
      v.phase === 'producing'
        ? 'Ctrl-C stops early and prints the summary'
        : 'waiting for the workers to store the rest (Ctrl-C again skips)',
    ),
  );
  return lines.map((l) => fit(l, opts.width));
}

/** One line for non-terminal output (CI logs). */
export function renderPlain(v: DemoView): string {
  const ready = v.conditions.find((x) => x.type === 'Ready');
  const lag = v.lagMessages ?? v.statusLag;
  return [
    `[${formatClock(v.elapsedMs)}] ${v.phase}`,
    `produced=${v.producedLines} (${Math.round(v.producedRate)}/s)`,
    `inserted=${v.insertedRows} (${Math.round(v.insertedRate)}/s)`,
    `dead-lettered=${v.deadLetters}`,
    `lag=${lag === undefined ? '?' : lag}msgs`,
    `replicas=${v.replicasCurrent ?? '?'}/${v.replicasDesired ?? '?'}`,
    `ready=${ready ? `${ready.status}(${ready.reason})` : '?'}`,
    ...(v.extraLines ?? []).map((l) => l.replace(/\s+/g, ' ')),
    ...v.errors.map((e) => `error="${e}"`),
  ].join(' ');
}

/** Escape sequence that repaints `lines` over the `previous` ones drawn before. */
export function repaint(previous: number, lines: readonly string[]): string {
  const up = previous > 0 ? `${ESC}${previous}A\r` : '';
  return `${up}${lines.map((l) => `${l}${ESC}K`).join('\n')}\n${ESC}J`;
}
