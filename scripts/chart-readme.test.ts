/**
 * The chart README documents every value of values.yaml with its actual default, and nothing
 * that values.yaml does not have; values.schema.json knows every top-level value.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { CHART_DIR } from './helm';

const values = parse(fs.readFileSync(path.join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<string, unknown>;
const readme = fs.readFileSync(path.join(CHART_DIR, 'README.md'), 'utf8');
const schema = JSON.parse(fs.readFileSync(path.join(CHART_DIR, 'values.schema.json'), 'utf8')) as {
  properties: Record<string, unknown>;
};

/** Leaf values by dotted path; lists and empty maps are leaves (documented as a whole). */
function leaves(node: unknown, prefix = ''): Record<string, unknown> {
  if (node === null || typeof node !== 'object' || Array.isArray(node) || Object.keys(node).length === 0) {
    return { [prefix]: node };
  }
  return Object.assign({}, ...Object.entries(node).map(([k, v]) => leaves(v, prefix ? `${prefix}.${k}` : k)));
}

/** Rows of the README's values table (its "## Values" section): key -> default cell. */
function documented(): Record<string, string> {
  const rows: Record<string, string> = {};
  const section = readme.slice(readme.indexOf('\n## Values'));
  for (const m of section.matchAll(/^\| `([A-Za-z0-9_.]+)` \| `([^`]*)` \|/gm)) rows[m[1]] = m[2];
  return rows;
}

describe('chart README', () => {
  it('documents every value with its default from values.yaml', () => {
    const expected = Object.fromEntries(
      Object.entries(leaves(values)).map(([k, v]) => [k, JSON.stringify(v)]),
    );
    expect(Object.keys(expected).length).toBeGreaterThan(50);
    expect(documented()).toEqual(expected);
  });

  it('matches the schema: every top-level value is typed', () => {
    expect(Object.keys(values).filter((k) => !(k in schema.properties))).toEqual([]);
  });
});
