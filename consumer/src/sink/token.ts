/**
 * Deduplication tokens. ClickHouse drops an INSERT whose `insert_deduplication_token` it has seen
 * within the table's deduplication window, so a batch retried — by this process, or re-cut from the
 * journal by the next owner of the partition — is stored once. Tokens are derived only from
 * what defines the batch (topic, partition, offset range) and a salt naming the pipeline and
 * target table: a recreated pipeline or a different table never collides with an old window.
 */
import { createHash } from 'node:crypto';

/** Short stable salt for a pipeline uid and target table (first 12 hex chars of SHA-256). */
export function tokenSalt(pipelineUid: string, database: string, table: string): string {
  return createHash('sha256').update(`${pipelineUid}\0${database}\0${table}`).digest('hex').slice(0, 12);
}

/** Token of a whole batch: `<topic>/<partition>/<firstOffset>-<lastOffset>/<salt>`. */
export function batchToken(
  topic: string,
  partition: number,
  firstOffset: number,
  lastOffset: number,
  salt: string,
): string {
  return `${topic}/${partition}/${firstOffset}-${lastOffset}/${salt}`;
}

/** Token of rows [fromRow, toRow) of a batch, used while isolating rows ClickHouse rejects. */
export function rowRangeToken(batch: string, fromRow: number, toRow: number): string {
  return `${batch}#rows${fromRow}-${toRow}`;
}

/**
 * Token of one partition-key group of a batch (rows regrouped by key, see regroup.ts), named by
 * its smallest and largest key: the same batch always yields the same groups.
 */
export function keyGroupToken(batch: string, firstKey: number, lastKey: number): string {
  return `${batch}#keys${firstKey}..${lastKey}`;
}

/** Token of a batch's dead-letter rows in the `<table>_dlq` table. */
export function deadLetterToken(batch: string): string {
  return `${batch}#dlq`;
}
