/**
 * Extension points of the reconciler. The Kafka topic and the ClickHouse tables are "external
 * parts": the reconciler calls `ensure` on every reconcile (it must be idempotent and return an
 * outcome instead of throwing for expected failures) and `delete` when a pipeline with
 * deletionPolicy Delete goes away. The autoscaler is a "scaling part" evaluated on every reconcile
 * of a pipeline with autoscaling on; it recommends replicas, which the reconciler writes through
 * the scale subresource as the autoscaler's field manager.
 */
import type { ResolvedSpec } from '../api/defaults';
import type { Condition, LogPipeline, LogPipelineStatus } from '../api/types';
import type { DestructiveGuard } from '../apply/guard';
import type { PipelineEvent } from '../apply/kube';
import type { Logger } from '../../../common/src/log';
import type { ConditionInput } from '../status/conditions';
import type { DeploymentView } from '../status/views';

/** Which external part; its condition is `${name}Ready` and its identity goes to status.topic/table. */
export type PartName = 'Topic' | 'Table';

/** What an external part observed in one `ensure`. */
export interface PartOutcome {
  status: Condition['status'];
  /** One word, CamelCase (e.g. TopicCreated, BrokerUnreachable). */
  reason: string;
  /** For humans; never contains secrets. */
  message: string;
  /** Identity and facts to record: status.topic for Topic, status.table for Table. */
  observed?: Record<string, unknown>;
  /** Ask to be called again after this long (e.g. waiting for a slow ALTER). */
  requeueAfterMs?: number;
  /** A transient failure: retry with the per-pipeline exponential backoff. */
  retry?: boolean;
  /** Significant things this call did or refused (e.g. "partitions 6 -> 12"), recorded as Events. */
  events?: PipelineEvent[];
  /**
   * The thing belongs to another pipeline (reason `Conflict`, the message names the owner): the
   * reconciler deploys no workers (scales existing ones to 0) and records no identity.
   */
  conflict?: boolean;
}

/** What the reconciler gives a part besides the resolved spec. */
export interface PartContext {
  pipeline: LogPipeline;
  /** Reads one key of a Secret in the pipeline's namespace (decoded); undefined when missing. */
  readSecretKey(name: string, key: string): Promise<string | undefined>;
  log: Logger;
  /** Confirmed before every destructive statement; cancels it when the leader lease is lost. */
  guard: DestructiveGuard;
  /**
   * Every cached LogPipeline; with `naming` (claim keys, parts/claims.ts) only those claiming one
   * of them, possibly more (older claims on a table or topic).
   */
  pipelines: (naming?: readonly string[]) => Iterable<LogPipeline>;
  /** Records an Event on the pipeline through the operator's deduplicating recorder (best effort). */
  event?(ev: PipelineEvent): Promise<void>;
  /**
   * Whether the pipeline's workers ask for pods now (ChildApplier.asksForPods); absent: they do.
   * Tables only workers write (parser stats) are created once they do.
   */
  workersAskForPods?(spec: ResolvedSpec): boolean;
}

/** A Kafka topic or ClickHouse table manager. */
export interface ExternalPart {
  name: PartName;
  ensure(spec: ResolvedSpec, ctx: PartContext): Promise<PartOutcome>;
  /**
   * Deletes what `recorded` (the status written from earlier outcomes) identifies; throws to
   * retry. May return an Event to record (e.g. "cluster id mismatch: topic left in place").
   */
  delete(
    spec: ResolvedSpec,
    recorded: LogPipelineStatus | undefined,
    ctx: PartContext,
  ): Promise<PipelineEvent | void>;
}

/** What the autoscaler decided in one evaluation. */
export interface ScalingOutcome {
  /** Replicas to set; undefined keeps the current value. */
  replicas?: number;
  status: Condition['status'];
  reason: string;
  message: string;
  /** Recorded as status.lag. */
  lag?: LogPipelineStatus['lag'];
  /** When to evaluate again (normally the poll interval). */
  requeueAfterMs?: number;
  /** A partition with lag stopped moving for the progress deadline: the Stalled condition's cause. */
  stall?: { reason: string; message: string };
  /** Records were deleted by retention before the workers consumed them (WorkersReady names it). */
  retentionLoss?: string;
  /** The cluster did not answer the last poll: the broker error (conditions name it as the cause). */
  kafkaUnreachable?: string;
}

/**
 * The lag-based autoscaler, evaluated for pipelines with autoscaling enabled; for the others it
 * only watches the partitions' progress (the outcome's `stall`; its Scaling fields are ignored).
 */
export interface ScalingPart {
  evaluate(
    spec: ResolvedSpec,
    deployment: DeploymentView | undefined,
    ctx: PartContext,
  ): Promise<ScalingOutcome>;
}

/** What the scheduled seal reports in one evaluation: the Sealed condition, status.seal, Events, next look. */
export interface SealOutcome {
  /** Absent without spec.integrity.seal (only ChainLinked is reported then). */
  condition?: ConditionInput;
  observed?: NonNullable<LogPipelineStatus['seal']>;
  /** ChainLinked, with spec.integrity.enabled (operator/src/compliance/chain-watch.ts). */
  chainLinked?: ConditionInput;
  events: PipelineEvent[];
  requeueAfterMs: number;
}

/** The scheduled daily seal (spec.integrity.seal), evaluated on every reconcile; never throws. */
export interface SealingPart {
  evaluate(spec: ResolvedSpec, ctx: PartContext): Promise<SealOutcome | undefined>;
}
