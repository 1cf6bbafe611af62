/**
 * How both entry points of the worker image (the worker and the syslog receiver) start against a
 * Kafka that may not answer yet, and how they die when they cannot start at all. An unreachable
 * Kafka at start is an outage, not a data error: the process keeps trying with capped backoff
 * rather than crash-looping the pod, stays unready meanwhile, and its readiness says why
 * ("Kafka unreachable: <broker error>"), so /readyz, the logs and the operator name the same cause.
 */
import { isKafkaUnavailable, KAFKA_UNREACHABLE_PREFIX } from '../../common/src/kafka/unavailable';
import type { Logger } from '../../common/src/log';
import { backoffMs, sleep, type BackoffPolicy } from '../../common/src/timing';
import { errorReason } from './sink/retry';
import { writeTerminationMessage } from './termination';

/** Wait between start attempts: 0.5 s doubling up to 15 s. */
export const START_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 15_000, factor: 2 };

/** "Kafka unreachable: <broker error>" when `err` says only that Kafka is unreachable, else undefined. */
export function kafkaUnreachableReason(err: unknown): string | undefined {
  return isKafkaUnavailable(err) ? `${KAFKA_UNREACHABLE_PREFIX}${errorReason(err, 256)}` : undefined;
}

/** Readiness reason for a failed start: the cause named, an unreachable Kafka as such. */
export function startFailureReason(what: string, err: unknown): string {
  return kafkaUnreachableReason(err) ?? `${what} failed: ${errorReason(err, 256)}`;
}

/** Options of KafkaStart.run (tests shorten the waits). */
export interface KafkaStartOptions {
  policy?: BackoffPolicy;
  /** Aborts the wait between attempts (the process is stopping). */
  signal?: AbortSignal;
  random?: () => number;
}

/**
 * One start against Kafka: `run` retries the connect step until it succeeds or the process stops,
 * and `notReady` is the readiness verdict meanwhile (undefined once started: the process's own
 * readiness rule applies from then on).
 */
export class KafkaStart {
  private lastFailure = 'connecting to Kafka';
  private started = false;

  /** `what` names the step in logs and reasons, e.g. "consumer start" or "kafka connect". */
  constructor(
    private readonly what: string,
    private readonly log: Logger,
  ) {}

  /** Runs `connect` until it resolves (true) or `stopped()` turns true (false); logs each failure. */
  async run(
    connect: () => Promise<void>,
    stopped: () => boolean,
    opts: KafkaStartOptions = {},
  ): Promise<boolean> {
    for (let attempt = 0; !stopped(); attempt++) {
      try {
        await connect();
        this.started = true;
        return true;
      } catch (err) {
        this.lastFailure = startFailureReason(this.what, err);
        this.log.warn(`${this.what} failed; retrying`, { err: errorReason(err), attempt });
        const policy = opts.policy ?? START_BACKOFF;
        await sleep(backoffMs(attempt, policy, opts.random), opts.signal);
      }
    }
    return false;
  }

  /** Not ready with the last failure while the start has not succeeded; undefined once it has. */
  notReady(): { ready: false; reason: string } | undefined {
    return this.started ? undefined : { ready: false, reason: this.lastFailure };
  }
}

/**
 * Runs an entry point's `main`; when it fails before the process could serve (a bad config, a
 * port in use), writes the cause to the termination message and stderr and exits 1.
 */
export function runEntryPoint(failedMsg: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    writeTerminationMessage(err);
    process.stderr.write(`${JSON.stringify({ level: 'error', msg: failedMsg, err: errorReason(err) })}\n`);
    process.exit(1);
  });
}
