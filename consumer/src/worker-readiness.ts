/**
 * The worker's readiness rule once it has started (before that, KafkaStart's verdict applies). Not
 * joined during a Kafka outage says so with the broker's words, as the start does, so /readyz, the
 * logs and the operator's WorkersReady name the same cause through the whole life of the pod.
 */
import { kafkaUnreachableReason } from './kafka-start';

/** What the readiness verdict is made of. */
export interface WorkerHealth {
  draining: boolean;
  /** Joined to the group with an assignment installed. */
  joined: boolean;
  clickhouseOk: boolean;
  /** The consumer's last error since it last joined (a crash, restarted or re-run), if any. */
  consumerError?: unknown;
}

/** Ready when joined and ClickHouse answers; else the first reason that holds. */
export function workerReadiness(h: WorkerHealth): { ready: boolean; reason: string } {
  if (h.draining) return { ready: false, reason: 'draining' };
  if (!h.joined) {
    return {
      ready: false,
      reason: kafkaUnreachableReason(h.consumerError) ?? 'not joined to the consumer group',
    };
  }
  if (!h.clickhouseOk) return { ready: false, reason: 'ClickHouse unreachable' };
  return { ready: true, reason: 'ok' };
}
