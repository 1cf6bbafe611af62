/**
 * Metric and label names a PromQL expression (or a Grafana `label_values(...)` query) refers to,
 * found lexically: good enough for the queries this project writes, and strict — any identifier
 * that is not a known function, keyword or variable counts as a metric name.
 */

const FUNCTIONS = new Set([
  'abs',
  'absent',
  'absent_over_time',
  'avg',
  'avg_over_time',
  'bottomk',
  'ceil',
  'changes',
  'clamp',
  'clamp_max',
  'clamp_min',
  'count',
  'count_over_time',
  'count_values',
  'delta',
  'deriv',
  'exp',
  'floor',
  'group',
  'histogram_quantile',
  'idelta',
  'increase',
  'irate',
  'label_join',
  'label_replace',
  'label_values',
  'last_over_time',
  'ln',
  'max',
  'max_over_time',
  'min',
  'min_over_time',
  'predict_linear',
  'quantile',
  'quantile_over_time',
  'rate',
  'resets',
  'round',
  'scalar',
  'sort',
  'sort_desc',
  'sqrt',
  'stddev',
  'stdvar',
  'sum',
  'sum_over_time',
  'time',
  'timestamp',
  'topk',
  'vector',
]);
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
]);

function stripNoise(expr: string): string {
  return expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\$\{?\w+\}?/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ');
}

/** Metric names in `expr` (deduplicated, in order of appearance). */
export function promqlMetrics(expr: string): string[] {
  const lv = /^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(expr.trim());
  if (lv) return [lv[1]];
  const text = stripNoise(expr)
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names: string[] = [];
  for (const m of text.matchAll(/(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    const [, word, call] = m;
    if (call || FUNCTIONS.has(word) || KEYWORDS.has(word)) continue;
    if (!names.includes(word)) names.push(word);
  }
  return names;
}

/** Label names `expr` filters on (inside `{...}`) or groups by (`by`/`without`/`on`/`ignoring`). */
export function promqlLabels(expr: string): string[] {
  const text = stripNoise(expr);
  const labels = new Set<string>();
  for (const sel of text.matchAll(/\{([^}]*)\}/g))
    for (const m of sel[1].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)) labels.add(m[1]);
  for (const g of text.matchAll(/\b(?:by|without|on|ignoring)\s*\(([^)]*)\)/g))
    for (const l of g[1]
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean))
      labels.add(l);
  return [...labels];
}
