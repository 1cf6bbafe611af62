/**
 * The ClickHouse side of `logpipeline verify`: TabSeparated/JSON streams of links, signed heads and
 * checkpoints, and the lookups the link and checkpoint-chain passes ask for (LinkPassSource,
 * CheckpointChainSource), each one streamed query. Separate from verify.ts, which orders the passes
 * and builds the report: these are the reads only, each bounded by what the server streams.
 */
import type { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import type { LinkRecord } from '../../../common/src/integrity/chain';
import { linkFromRow, type LinkRow } from '../../../common/src/integrity/link-rows';
import type { TimeWindow } from './canonical-sql';
import { textLines } from './line-stream';
import type { CheckpointRow } from './verify-checkpoints';
import type { CheckpointChainSource } from './verify-chain';
import type { LinkPassSource, SignedHead } from './verify-links';
import * as Q from './verify-queries';

/** The result stream of one query (its format is in the query). */
export async function stream(client: ClickHouseClient, query: string): Promise<Readable> {
  return (await client.exec({ query })).stream as Readable;
}

/** Parses a TabSeparated line of LINK_SELECT. */
export function parseLinkLine(line: string): LinkRecord {
  const f = line.split('\t');
  if (f.length !== 12) throw new Error(`unexpected line in the link stream: ${line.slice(0, 300)}`);
  const names = [
    'pipeline',
    'table_name',
    'partition',
    'first_offset',
    'last_offset',
    'row_count',
    'min_ts_ms',
    'max_ts_ms',
    'batch_digest',
    'prev_link',
    'link',
    'inserted_at_ms',
  ];
  return linkFromRow(Object.fromEntries(names.map((n, i) => [n, f[i]])) as unknown as LinkRow);
}

/** The links a LINK_SELECT query returns, parsed, in the query's order. */
export async function* links(client: ClickHouseClient, query: string): AsyncGenerator<LinkRecord> {
  for await (const line of textLines(await stream(client, query))) yield parseLinkLine(line);
}

/** The signed heads (partition, last offset, link, creation time) a heads query returns. */
export async function* heads(client: ClickHouseClient, query: string): AsyncGenerator<SignedHead> {
  for await (const line of textLines(await stream(client, query))) {
    const [p, o, link, at] = line.split('\t');
    yield { partition: Number(p), lastOffset: Number(o), link, createdAtMs: Number(at) };
  }
}

/** The checkpoint rows (one JSON object a line) a checkpoints query returns. */
export async function* checkpoints(client: ClickHouseClient, query: string): AsyncGenerator<CheckpointRow> {
  for await (const line of textLines(await stream(client, query))) yield JSON.parse(line) as CheckpointRow;
}

/** The fields of the query's first line; empty when it returns nothing. */
export async function firstLine(client: ClickHouseClient, query: string): Promise<string[]> {
  for await (const line of textLines(await stream(client, query))) return line.split('\t');
  return [];
}

/** The link pass's reads: the window's links and heads, and lookups around gaps. */
export function linkPassSource(
  client: ClickHouseClient,
  t: Q.IntegrityTables,
  window: TimeWindow,
  created: TimeWindow,
): LinkPassSource {
  return {
    links: links(client, Q.buildLinksQuery(t, window)),
    heads: heads(client, Q.buildHeadsQuery(t, created)),
    predecessor: async (p, first) => (await collect(links(client, Q.buildPredecessorQuery(t, p, first))))[0],
    between: (p, after, before) => collect(links(client, Q.buildBetweenQuery(t, p, after, before))),
    lookup: async (hs) => {
      const found = new Map<string, string[]>();
      for await (const line of textLines(await stream(client, Q.buildHeadLookupQuery(t, hs)))) {
        const [p, o, link] = line.split('\t');
        found.set(`${p}:${o}`, [...(found.get(`${p}:${o}`) ?? []), link]);
      }
      return found;
    },
  };
}

/** The checkpoint-chain pass's reads: which checkpoint ids exist, and links inserted between two times. */
export function chainSource(client: ClickHouseClient, t: Q.IntegrityTables): CheckpointChainSource {
  return {
    existing: async (ids) => {
      const found = new Set<string>();
      for await (const line of textLines(await stream(client, Q.buildCheckpointIdsQuery(t, ids))))
        found.add(line);
      return found;
    },
    insertedBetween: async (afterMs, beforeMs) => {
      if (beforeMs <= afterMs) return { count: 0, firstMs: 0, lastMs: 0 };
      const [count, firstMs, lastMs] = (
        await firstLine(client, Q.buildInsertedBetweenQuery(t, afterMs, beforeMs))
      ).map(Number);
      return { count: count || 0, firstMs, lastMs };
    },
  };
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
