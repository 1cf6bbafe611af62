/**
 * Partition and ordering key functions a LogPipeline may apply to a column. The operator renders
 * them into DDL and admits them in the CRD; the worker evaluates the same functions to keep one
 * INSERT inside few partitions (consumer/src/encode/partition-key.ts), so the list lives here.
 */

/** Every key function, in the order the CRD documents them. */
export const KEY_FUNCTIONS = [
  'toYYYYMMDD',
  'toYYYYMM',
  'toDate',
  'toStartOfHour',
  'toStartOfDay',
  'toMonday',
] as const;

/** One of KEY_FUNCTIONS. */
export type KeyFunction = (typeof KEY_FUNCTIONS)[number];

const KEY_FUNCTION_SET: ReadonlySet<string> = new Set(KEY_FUNCTIONS);

/** True when `name` is one of KEY_FUNCTIONS. */
export function isKeyFunction(name: unknown): name is KeyFunction {
  return typeof name === 'string' && KEY_FUNCTION_SET.has(name);
}
