/**
 * Keeps the Kafka consumer alive across a Kafka outage. kafkajs restarts its consumer only after
 * retriable errors; when the brokers vanish mid-rebalance it can crash with a non-retriable
 * "Failed to find group coordinator" (or a closed connection) and stay stopped. For a worker that
 * means exiting on every Kafka blip, so errors that only say "Kafka is unreachable" re-run the
 * consumer here, with backoff, until it runs again or the worker stops. Errors about the consumer
 * itself (an unreadable codec, an invalid topic) still stop it for good.
 */
import type { Logger } from '../../common/src/log';
import { backoffMs, sleep } from '../../common/src/timing';
import { errorReason } from './sink/retry';

export { isKafkaUnavailable } from '../../common/src/kafka/unavailable';

/**
 * Runs `run` (connect and run the consumer) until it succeeds or `stopped()` turns true, waiting a
 * capped, jittered backoff between attempts; resolves true when the consumer runs again.
 */
export async function rerunConsumer(
  run: () => Promise<void>,
  stopped: () => boolean,
  log: Logger,
  signal?: AbortSignal,
): Promise<boolean> {
  for (let attempt = 0; !stopped(); attempt++) {
    await sleep(backoffMs(attempt, { initialMs: 500, maxMs: 15_000, factor: 2 }), signal);
    if (stopped()) break;
    try {
      await run();
      log.info('consumer running again after a Kafka outage', { attempt });
      return true;
    } catch (err) {
      log.warn('consumer restart failed; retrying', { err: errorReason(err), attempt });
    }
  }
  return false;
}
