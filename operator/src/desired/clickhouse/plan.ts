/**
 * The diff between a desired table and what ClickHouse reports for it, as ALTER actions or
 * refusals. Only additive or reversible changes are planned (new columns, TTL, the dedup window,
 * missing skip indexes); anything that would lose or rewrite data (dropped or retyped columns,
 * another sort/partition key, engine or storage policy) is refused and nothing is applied.
 * ClickHouse's own rendering (types, `toIntervalDay(n)`, omitted DELETE, backticks) is normalised
 * before comparing, so reconciling an unchanged spec plans nothing.
 */
import type { DesiredTable } from './ddl';
import { qualifiedName, quoteIdentifier } from '../../../../common/src/sql/identifiers';
import { renderIndexExpression } from './schema';
import { parseTtl, sameTtl } from './ttl';
import { normalizeColumnType } from './type-grammar';

/** What ClickHouse reports about an existing table (system.tables, system.columns, system.data_skipping_indices). */
export interface ObservedTable {
  engine: string;
  engineFull: string;
  sortingKey: string;
  partitionKey: string;
  storagePolicy: string;
  columns: Array<{ name: string; type: string }>;
  skipIndexes: string[];
}

/** One ALTER/CREATE to run; `settings` are query-level settings it needs. */
export interface TableAction {
  kind: 'create' | 'addColumn' | 'addIndex' | 'modifyTtl' | 'removeTtl' | 'materializeTtl' | 'modifySetting';
  sql: string;
  settings?: Record<string, string>;
  description: string;
}

/** A change the operator will not make; `reason` is a one-word CamelCase condition reason. */
export interface Refusal {
  reason: 'DestructiveChangeRefused';
  kind:
    | 'engine'
    | 'dropColumn'
    | 'retypeColumn'
    | 'orderBy'
    | 'partitionBy'
    | 'storagePolicy'
    | 'shortenRetention';
  message: string;
}

/** The plan: actions to apply in order, or refusals (when any refusal exists, apply nothing). */
export interface TablePlan {
  actions: TableAction[];
  refusals: Refusal[];
}

function normalizeExpression(text: string): string {
  return text.replace(/`/g, '').replace(/\s+/g, ' ').trim();
}

/** The TTL and SETTINGS parts of system.tables.engine_full. */
export function splitEngineFull(engineFull: string): { ttl: string; settings: Record<string, string> } {
  const settingsAt = engineFull.lastIndexOf(' SETTINGS ');
  const head = settingsAt >= 0 ? engineFull.slice(0, settingsAt) : engineFull;
  const settings: Record<string, string> = {};
  if (settingsAt >= 0) {
    for (const pair of engineFull.slice(settingsAt + 10).split(', ')) {
      const eq = pair.indexOf(' = ');
      if (eq > 0) settings[pair.slice(0, eq).trim()] = pair.slice(eq + 3).trim();
    }
  }
  const ttlAt = head.indexOf(' TTL ');
  return { ttl: ttlAt >= 0 ? head.slice(ttlAt + 5).trim() : '', settings };
}

function sameType(observed: string, desired: string): boolean {
  const normalized = normalizeColumnType(observed);
  return (normalized.ok ? normalized.value : observed.replace(/\s+/g, ' ').trim()) === desired;
}

function keyRefusals(d: DesiredTable, o: ObservedTable): Refusal[] {
  const refusals: Refusal[] = [];
  const refuse = (kind: Refusal['kind'], message: string) =>
    refusals.push({ reason: 'DestructiveChangeRefused', kind, message });
  const table = `${d.database}.${d.storageName}`;
  if (o.engine !== d.engine) refuse('engine', `${table} has engine ${o.engine}, the spec needs ${d.engine}`);
  const wantOrder = normalizeExpression(d.schema.orderBy.join(', '));
  if (normalizeExpression(o.sortingKey) !== wantOrder) {
    refuse(
      'orderBy',
      `${table} is ordered by (${o.sortingKey}); changing it to (${wantOrder}) would rewrite the table`,
    );
  }
  const wantPartition = normalizeExpression(d.schema.partitionBy);
  if (normalizeExpression(o.partitionKey) !== wantPartition) {
    refuse(
      'partitionBy',
      `${table} is partitioned by ${o.partitionKey || 'nothing'}; changing it to ${wantPartition} would rewrite the table`,
    );
  }
  const policy = d.settings.storage_policy?.replace(/'/g, '');
  if (policy !== undefined && o.storagePolicy !== policy) {
    refuse(
      'storagePolicy',
      `${table} uses storage policy ${o.storagePolicy}; moving it to ${policy} is not done automatically`,
    );
  }
  for (const c of o.columns) {
    const want = d.schema.columns.find((w) => w.name === c.name);
    if (!want)
      refuse(
        'dropColumn',
        `${table} has column ${c.name} that the spec no longer declares; columns are never dropped`,
      );
    else if (!sameType(c.type, want.type))
      refuse('retypeColumn', `${table}.${c.name} is ${c.type}; retyping it to ${want.type} is refused`);
  }
  return refusals;
}

function columnActions(d: DesiredTable, o: ObservedTable): TableAction[] {
  const actions: TableAction[] = [];
  for (const c of d.schema.columns) {
    if (o.columns.some((oc) => oc.name === c.name)) continue;
    // The storage table gets the full definition; a Distributed table only needs name, type, default.
    const full = `${quoteIdentifier(c.name)} ${c.type}${c.default !== undefined ? ` DEFAULT ${c.default}` : ''}`;
    const codec = c.codecs.length > 0 ? ` CODEC(${c.codecs.join(', ')})` : '';
    actions.push({
      kind: 'addColumn',
      sql: `ALTER TABLE ${qualifiedName(d.database, d.storageName)}${d.onCluster} ADD COLUMN IF NOT EXISTS ${full}${codec}`,
      description: `add column ${c.name} ${c.type}`,
    });
    if (d.storageName !== d.name) {
      actions.push({
        kind: 'addColumn',
        sql: `ALTER TABLE ${qualifiedName(d.database, d.name)}${d.onCluster} ADD COLUMN IF NOT EXISTS ${full}`,
        description: `add column ${c.name} to the Distributed table`,
      });
    }
  }
  for (const ix of d.schema.skipIndexes) {
    if (o.skipIndexes.includes(ix.name)) continue;
    const sql = `ALTER TABLE ${qualifiedName(d.database, d.storageName)}${d.onCluster} ADD INDEX IF NOT EXISTS ${quoteIdentifier(ix.name)} ${renderIndexExpression(ix)} TYPE ${ix.type} GRANULARITY ${ix.granularity}`;
    actions.push({ kind: 'addIndex', sql, description: `add skip index ${ix.name} (new parts only)` });
  }
  return actions;
}

function ttlActions(d: DesiredTable, o: ObservedTable, materializeOnChange: boolean): TableAction[] {
  const observed = splitEngineFull(o.engineFull).ttl;
  const alter = `ALTER TABLE ${qualifiedName(d.database, d.storageName)}${d.onCluster}`;
  if (d.schema.ttl === '')
    return observed === ''
      ? []
      : [{ kind: 'removeTtl', sql: `${alter} REMOVE TTL`, description: 'remove the table TTL' }];
  if (observed !== '' && sameTtl(observed, d.schema.ttl)) return [];
  // materialize_ttl_after_modify=0: rewriting every part of a two-year table must be asked for.
  const actions: TableAction[] = [
    {
      kind: 'modifyTtl',
      sql: `${alter} MODIFY TTL ${d.schema.ttl}`,
      settings: { materialize_ttl_after_modify: '0' },
      description: `set TTL ${d.schema.ttl}`,
    },
  ];
  if (materializeOnChange)
    actions.push({
      kind: 'materializeTtl',
      sql: `${alter} MATERIALIZE TTL`,
      description: 'apply the new TTL to existing parts',
    });
  return actions;
}

function settingActions(d: DesiredTable, o: ObservedTable): TableAction[] {
  const observed = splitEngineFull(o.engineFull).settings;
  const alter = `ALTER TABLE ${qualifiedName(d.database, d.storageName)}${d.onCluster}`;
  return Object.entries(d.settings)
    .filter(([key, value]) => key !== 'storage_policy' && observed[key] !== value)
    .map(([key, value]) => ({
      kind: 'modifySetting' as const,
      sql: `${alter} MODIFY SETTING ${key} = ${value}`,
      description: `set ${key} = ${value}`,
    }));
}

/** Seconds after which the delete rule of a TTL text removes rows (undefined: no delete rule). */
function deleteSeconds(ttl: string): number | undefined {
  return ttl === '' ? undefined : parseTtl(ttl)?.rules.find((r) => r.action.kind === 'delete')?.seconds;
}

/**
 * Defence in depth behind the admission rule: a TTL that deletes sooner than the table's current
 * one is refused unless the spec sets retention.allowShortening (a longer one is always applied).
 */
function retentionRefusal(d: DesiredTable, o: ObservedTable, allowShortening: boolean): Refusal | undefined {
  if (allowShortening) return undefined;
  const current = deleteSeconds(splitEngineFull(o.engineFull).ttl);
  const wanted = d.schema.ttlRules.find((r) => r.action.kind === 'delete')?.seconds;
  if (current === undefined || wanted === undefined || wanted >= current) return undefined;
  const days = (s: number) => `${Math.round((s / 86_400) * 100) / 100}d`;
  return {
    reason: 'DestructiveChangeRefused',
    kind: 'shortenRetention',
    message:
      `${d.database}.${d.storageName} deletes rows after ${days(current)}; shortening that to ${days(wanted)} ` +
      'would delete retained logs and is refused unless spec.clickhouse.retention.allowShortening is true',
  };
}

/** Plans how to bring `observed` (undefined: the table does not exist) to `desired`; pure. */
export function planTableChanges(
  desired: DesiredTable,
  observed: ObservedTable | undefined,
  opts: { materializeOnChange?: boolean; allowShortening?: boolean } = {},
): TablePlan {
  if (!observed) {
    return {
      actions: desired.create.map((sql) => ({
        kind: 'create' as const,
        sql,
        description: `create ${desired.database}.${desired.name}`,
      })),
      refusals: [],
    };
  }
  const refusals = keyRefusals(desired, observed);
  const shortened = retentionRefusal(desired, observed, !!opts.allowShortening);
  if (shortened) refusals.push(shortened);
  if (refusals.length > 0) return { actions: [], refusals };
  return {
    actions: [
      ...columnActions(desired, observed),
      ...ttlActions(desired, observed, !!opts.materializeOnChange),
      ...settingActions(desired, observed),
    ],
    refusals: [],
  };
}
