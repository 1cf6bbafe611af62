/**
 * Which Kafka client errors mean "the cluster (or the path to it) does not answer right now", as
 * opposed to errors about the request itself. The worker retries those without limit (an outage,
 * not a data error) and the operator names them in its conditions as KafkaUnreachable; one list so
 * both sides call the same thing an outage.
 */

/** kafkajs error names that mean the cluster (or the path to it) is unavailable right now. */
const UNAVAILABLE = new Set([
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSBrokerNotFound',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNumberOfRetriesExceeded',
]);

/** True when `err` or any error in its cause chain says only that Kafka is unreachable. */
export function isKafkaUnavailable(err: unknown): boolean {
  for (let e = err as { name?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 8; depth++) {
    if (typeof e.name === 'string' && UNAVAILABLE.has(e.name)) return true;
    e = e.cause as typeof e;
  }
  return false;
}

/** Prefix of every message that names an unreachable Kafka as the cause (conditions, readiness). */
export const KAFKA_UNREACHABLE_PREFIX = 'Kafka unreachable: ';
