/**
 * The table's partition key, computed in the worker for every row, so a batch spanning more
 * partitions than ClickHouse takes in one INSERT (max_partitions_per_insert_block, 100 by
 * default: a history import easily spans 730 days) is regrouped by key BEFORE it is sent
 * (sink/regroup.ts). Keys are a pure function of the batch's rows and its journaled ingest time,
 * so the groups and their dedup tokens are the same on every replay. Supported: the operator's key
 * forms (toYYYYMMDD, toYYYYMM, toDate, toStartOfDay, toStartOfHour, toMonday, or a bare Date/DateTime
 * column) over a column fed from the line's timestamp or the ingest time, in the column's time zone.
 * Anything else yields no key function; ClickHouse's own refusal (class `split`) then bisects.
 */
import type { ColumnInput } from './column-plan';

/** A partition key expression as the operator renders it (the operator's desired/clickhouse/schema.ts; functions: common/src/sql/key-functions.ts). */
export interface PartitionKeyInput {
  column: string;
  function?: string;
}

/** Key of one row from its event time and the batch's ingest time (both epoch ms). */
export type RowKeyFn = (timestampMs: number, ingestMs: number) => number;

/** ClickHouse's default max_partitions_per_insert_block. */
export const MAX_PARTITIONS_PER_INSERT = 100;

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** Offset (ms east of UTC) of a time zone at a UTC instant, cached per hour. */
function offsetFinder(tz: string): (utcMs: number) => number {
  if (/^(UTC|GMT|Etc\/UTC|Etc\/GMT|Z)$/i.test(tz)) return () => 0;
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
  });
  const cache = new Map<number, number>();
  return (utcMs) => {
    const hour = Math.floor(utcMs / HOUR_MS);
    let off = cache.get(hour);
    if (off === undefined) {
      const v: Record<string, number> = {};
      for (const p of fmt.formatToParts(hour * HOUR_MS))
        if (p.type !== 'literal') v[p.type] = Number(p.value);
      off = Date.UTC(v.year, v.month - 1, v.day, v.hour, v.minute) - hour * HOUR_MS;
      if (cache.size > 100_000) cache.clear();
      cache.set(hour, off);
    }
    return off;
  };
}

/** The time zone named in a DateTime/DateTime64 type, else UTC (the worker cannot know the server's). */
function columnTimeZone(type: string): string {
  const m = /DateTime(?:64)?\(\s*(?:\d+\s*,\s*)?'([^']+)'\s*\)/.exec(type);
  return m ? m[1] : 'UTC';
}

/** Compiles the per-row key of `key` over `columns`; null when the worker cannot compute it. */
export function compilePartitionKey(
  key: PartitionKeyInput | undefined,
  columns: readonly ColumnInput[],
): RowKeyFn | null {
  if (!key) return null;
  const col = columns.find((c) => c.name === key.column);
  if (!col || (col.source !== 'timestamp' && col.source !== 'ingest_time')) return null;
  const isDate = /^(Nullable\()?Date(32)?\b/.test(col.type) && !/DateTime/.test(col.type);
  if (!isDate && !/DateTime/.test(col.type)) return null;
  const offset = offsetFinder(columnTimeZone(col.type));
  const fromIngest = col.source === 'ingest_time';
  const local = (ts: number, ingest: number) => {
    const utc = fromIngest || ts !== ts ? ingest : ts;
    return utc + offset(utc);
  };
  switch (key.function) {
    case 'toYYYYMMDD':
    case 'toDate':
    case 'toStartOfDay':
      return (ts, ingest) => Math.floor(local(ts, ingest) / DAY_MS);
    case 'toStartOfHour':
      return (ts, ingest) => Math.floor(local(ts, ingest) / HOUR_MS);
    case 'toMonday':
      // 1970-01-01 was a Thursday: shifting by 3 days makes weeks start on Monday.
      return (ts, ingest) => Math.floor((Math.floor(local(ts, ingest) / DAY_MS) + 3) / 7);
    case 'toYYYYMM':
      return (ts, ingest) => {
        const d = new Date(local(ts, ingest));
        return d.getUTCFullYear() * 12 + d.getUTCMonth();
      };
    case undefined:
      return isDate
        ? (ts, ingest) => Math.floor(local(ts, ingest) / DAY_MS)
        : (ts, ingest) => Math.floor((fromIngest || ts !== ts ? ingest : ts) / 1000);
    default:
      return null;
  }
}
