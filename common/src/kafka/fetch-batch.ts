/**
 * A faster drop-in for kafkajs's consumer `Batch` (kafkajs/src/consumer/batch.js). kafkajs builds
 * every fetched partition's Batch by parsing each message's string offset into a BigInt-backed
 * Long to drop the messages below the fetched offset, then copies the array twice more (aborted
 * transactions, control records) through per-message closures: for one-line messages that was
 * the largest per-message cost left in the client. A partition's records arrive in offset order,
 * so the messages below the fetched offset are a prefix (only the first record batch of a fetch
 * can start before it): this Batch finds that prefix with number comparisons, shares the array
 * when nothing is dropped, and keeps kafkajs's own code (same prototype, same methods) for
 * everything else — offsets past 2^53 and fetches with aborted transactions take the original
 * constructor unchanged.
 *
 * kafkajs's consumer group captures the Batch class when it is first loaded, so the replacement
 * must be installed before anything requires 'kafkajs' (the worker's main.ts does it first);
 * otherwise the original stays and install reports false. kafkajs is pinned in package.json.
 *
 * Record runs (record-run.ts: one object per record batch, carrying its last offset) pass through
 * the same prefix logic unchanged; for kafkajs's own constructor they are expanded into its message
 * objects first (withMessageObjects).
 */
/* eslint-disable @typescript-eslint/no-require-imports */
import { RecordRun } from './record-run';

const BATCH = 'kafkajs/src/consumer/batch';
const CONSUMER_GROUP = 'kafkajs/src/consumer/consumerGroup';

/** The message fields a Batch reads (kafkajs's record objects). */
interface FetchedMessage {
  offset: string;
  isControlRecord?: boolean;
}

/** kafkajs's per-partition fetch result as the consumer group hands it to Batch. */
interface PartitionData {
  partition: number;
  highWatermark: string;
  abortedTransactions?: unknown[];
  messages: FetchedMessage[];
}

type BatchConstructor = new (topic: string, fetchedOffset: string, data: PartitionData) => object;

/** The messages a Batch exposes, as kafkajs's constructor computes them (no aborted transactions). */
export function batchMessages(
  fetchedOffset: string,
  raw: FetchedMessage[],
): { withinOffset: FetchedMessage[]; messages: FetchedMessage[] } | undefined {
  const fetched = Number(fetchedOffset);
  if (!Number.isSafeInteger(fetched)) return undefined;
  let first = 0;
  while (first < raw.length && Number(raw[first].offset) < fetched) first++;
  if (first < raw.length && !Number.isSafeInteger(Number(raw[raw.length - 1].offset))) return undefined;
  const withinOffset = first === 0 ? raw : raw.slice(first);
  let control = false;
  for (let i = 0; i < withinOffset.length; i++) {
    if (withinOffset[i].isControlRecord) {
      control = true;
      break;
    }
  }
  return { withinOffset, messages: control ? withinOffset.filter((m) => !m.isControlRecord) : withinOffset };
}

/** Builds the fast Batch class over kafkajs's original (same prototype: every method is kafkajs's). */
export function fastBatchClass(Original: BatchConstructor): BatchConstructor {
  function FastBatch(
    this: Record<string, unknown>,
    topic: string,
    fetchedOffset: string,
    data: PartitionData,
  ) {
    const aborted = data.abortedTransactions;
    const fast =
      !useFast || (aborted && aborted.length > 0) ? undefined : batchMessages(fetchedOffset, data.messages);
    if (!fast) return new Original(topic, fetchedOffset, withMessageObjects(data));
    this.fetchedOffset = fetchedOffset;
    this.topic = topic;
    this.partition = data.partition;
    this.highWatermark = data.highWatermark;
    this.rawMessages = data.messages;
    this.messagesWithinOffset = fast.withinOffset;
    this.messages = fast.messages;
  }
  FastBatch.prototype = Original.prototype;
  return FastBatch as unknown as BatchConstructor;
}

/**
 * The partition data with every RecordRun (record-run.ts) expanded into kafkajs's message objects,
 * for kafkajs's own Batch (aborted transactions are filtered per message); unchanged without runs.
 */
export function withMessageObjects(data: PartitionData): PartitionData {
  if (!data.messages.some((m) => m instanceof RecordRun)) return data;
  const messages: FetchedMessage[] = [];
  for (const m of data.messages) {
    if (m instanceof RecordRun) for (const r of m.expand()) messages.push(r as FetchedMessage);
    else messages.push(m);
  }
  return { ...data, messages };
}

let installed: boolean | undefined;
let useFast = true;

/**
 * Puts the fast Batch in place of kafkajs's before kafkajs's consumer group is loaded (idempotent;
 * `enabled=false` switches back to the original for A/B runs). True when it is (or can be) in use.
 */
export function installFastFetchBatch(enabled = true): boolean {
  useFast = enabled;
  if (installed !== undefined) return installed;
  if (require.cache[require.resolve(CONSUMER_GROUP)]) return (installed = false);
  const path = require.resolve(BATCH);
  const Original = require(path) as BatchConstructor;
  const cached = require.cache[path];
  if (!cached) return (installed = false);
  cached.exports = fastBatchClass(Original);
  return (installed = true);
}
