/**
 * Says why when the pipeline's Kafka does not answer (pure). The workers and the receiver retry an
 * unreachable Kafka without limit (an outage, not a data error) and only turn unready, which alone
 * reads "0 of 2 workers ready". The operator's own Kafka observer polls the same cluster every
 * interval; when its last round found the cluster unreachable, the conditions name that cause:
 * TopicReady False (the topic cannot be reached, whatever the last topic check found),
 * WorkersReady / IngestReady False with the broker error in front of the pod count. Ready, built
 * from these, then says "Kafka unreachable: <broker error>" too, and each flip is an Event. An
 * outage is waited out, not a failure of the pipeline's configuration: Stalled stays False and
 * Reconciling True with the cause (kstatus InProgress, as for a broker that never answered), so
 * GitOps tools do not fail a rollout over it.
 */
import { KAFKA_UNREACHABLE_PREFIX } from '../../../common/src/kafka/unavailable';
import type { ConditionInput } from './conditions';

/** Reason of TopicReady, WorkersReady and IngestReady while the pipeline's Kafka does not answer. */
export const KAFKA_UNREACHABLE = 'KafkaUnreachable';

/** Reasons that only count unready pods: an unreachable Kafka explains them. */
const UNREADY_PODS = new Set(['WorkersUnavailable', 'ReceiversUnavailable']);

/** `cond` with an unreachable Kafka (`cause`: the broker error) named as its cause where it explains it. */
export function blameKafka(cond: ConditionInput, cause: string | undefined): ConditionInput {
  if (cause === undefined) return cond;
  const named = `${KAFKA_UNREACHABLE_PREFIX}${cause}`;
  if (cond.type === 'TopicReady') {
    // A False topic already says why (its own check failed, possibly on this very outage).
    if (cond.status === 'False') return cond;
    return { ...cond, status: 'False', reason: KAFKA_UNREACHABLE, message: named };
  }
  if (cond.status === 'False' && UNREADY_PODS.has(cond.reason))
    return { ...cond, reason: KAFKA_UNREACHABLE, message: `${named} (${cond.message})` };
  return cond;
}
