/**
 * Assembles a pipeline's status from what one reconcile observed: the Deployment as stored, the
 * external parts' outcomes and the autoscaler's decision. Pure: no I/O.
 */
import type { ResolvedSpec } from '../api/defaults';
import type { LogPipelineStatus } from '../api/types';
import type { DeploymentView } from './views';
import { selectorString, workerName } from '../desired/labels';
import type { PodView } from './pod-view';
import type { ParserCoverage } from '../apply/parser-coverage';
import {
  CONFLICT,
  parserCoverageCondition,
  readyCondition,
  scalingCondition,
  workersCondition,
  workersVerdict,
  type ConditionInput,
} from './conditions';
import { progressConditions, type InProgress, type StallCause } from './kstatus';
import { crashLoopCondition } from './worker-pods';
import { blameKafka } from './kafka-outage';
import type { WorkersVerdict } from './workers-starting';

/** One part's contribution: its condition and what it recorded. */
export interface PartObservation {
  condition: ConditionInput;
  observed?: Record<string, unknown>;
}

/** What the autoscaler decided, if it ran. */
export interface ScalingObservation {
  status: ConditionInput['status'];
  reason: string;
  message: string;
  lag?: LogPipelineStatus['lag'];
}

/** What explains a pipeline that does not progress: its worker pods and a stalled partition. */
export interface ProgressObservation {
  pods?: readonly PodView[];
  partitionStall?: StallCause;
  /** The broker error when the operator's last Kafka observation found the cluster unreachable. */
  kafkaUnreachable?: string;
  /** Records deleted by retention before they were consumed (scaling part's observation). */
  retentionLoss?: string;
  /** The syslog receiver (spec.ingest): its condition, a stalled or serving rollout, its status fields. */
  ingest?: {
    condition: ConditionInput;
    stall?: StallCause;
    progress?: InProgress;
    status: LogPipelineStatus['ingest'];
  };
  /** Now (ms): with `pods`, a scale-up's new workers are judged by their start-up budget. */
  nowMs?: number;
  /** status.workers.startingSince as stored (status/workers-starting.ts). */
  startingSince?: string | null;
}

/**
 * Conditions (Ready, TopicReady, TableReady, WorkersReady, Scaling, Stalled, Reconciling) and the
 * other status fields. A crash-looping worker pod makes WorkersReady False with its reason and the
 * pipeline Stalled; so does a partition stalled past the progress deadline.
 */
export function computeStatus(
  spec: ResolvedSpec,
  deployment: DeploymentView,
  topic: PartObservation,
  table: PartObservation,
  scaling: ScalingObservation | undefined,
  seal?: { condition?: ConditionInput; observed?: LogPipelineStatus['seal']; chainLinked?: ConditionInput },
  progress: ProgressObservation = {},
): { conditions: ConditionInput[]; extra: LogPipelineStatus; requeueAfterMs?: number } {
  const auto = spec.workers.autoscaling.enabled;
  const desired = auto ? deployment.replicas : spec.workers.replicas;
  const crash = desired > 0 ? crashLoopCondition(progress.pods ?? []) : undefined;
  const outage = progress.kafkaUnreachable;
  const verdict = crash ? { condition: crash } : judgeWorkers(spec, deployment, desired, progress);
  const workers = withRetentionLoss(crash ?? blameKafka(verdict.condition, outage), progress.retentionLoss);
  const topicCond = blameKafka(topic.condition, outage);
  const ingest = progress.ingest && {
    ...progress.ingest,
    condition: blameKafka(progress.ingest.condition, outage),
  };
  const stall = crash
    ? { reason: crash.reason, message: crash.message }
    : (progress.partitionStall ?? ingest?.stall);
  const scalingCond: ConditionInput = scaling
    ? { type: 'Scaling', status: scaling.status, reason: scaling.reason, message: scaling.message }
    : scalingCondition(deployment, auto, desired);
  const ready = readyCondition([topicCond, table.condition, workers, ...(ingest ? [ingest.condition] : [])]);
  const { parserCoverage, ...tableObserved } = (table.observed ?? {}) as {
    parserCoverage?: ParserCoverage;
  };
  const conditions = [
    ready,
    topicCond,
    table.condition,
    workers,
    ...(ingest ? [ingest.condition] : []),
    scalingCond,
    // The seal is evidence about past days, not the data path: it does not gate Ready.
    ...(seal?.condition ? [seal.condition] : []),
    ...(seal?.chainLinked ? [seal.chainLinked] : []),
    ...progressConditions(ready, stall, verdict.progress ?? ingest?.progress),
    parserCoverageCondition(parserCoverage, spec.coverage.maxMissingSrcIpPercent),
  ];
  const extra: LogPipelineStatus = {
    workers: {
      desired,
      current: deployment.status.replicas ?? 0,
      ready: deployment.status.readyReplicas ?? 0,
      selector: selectorString(spec.name),
      ...startingSince(verdict.startingSinceMs, progress.startingSince),
    },
    ...(topic.observed ? { topic: topic.observed } : {}),
    ...(table.observed ? { table: tableObserved } : {}),
    ...(parserCoverage ? { parserCoverage } : {}),
    ...(scaling?.lag ? { lag: scaling.lag } : {}),
    ...(seal?.observed ? { seal: seal.observed } : {}),
    ...(ingest ? { ingest: ingest.status } : {}),
  };
  return { conditions, extra, requeueAfterMs: verdict.recheckInMs };
}

/** WorkersReady; with the pods and the clock observed, a scale-up's start-up is tolerated. */
function judgeWorkers(
  spec: ResolvedSpec,
  deployment: DeploymentView,
  desired: number,
  progress: ProgressObservation,
): WorkersVerdict {
  const name = workerName(spec.name);
  if (progress.pods === undefined || progress.nowMs === undefined)
    return { condition: workersCondition(deployment, desired, name) };
  const stored = progress.startingSince ? Date.parse(progress.startingSince) : NaN;
  return workersVerdict(deployment, desired, name, {
    pods: progress.pods,
    nowMs: progress.nowMs,
    budgetMs: spec.workers.progressDeadlineMs,
    budgetText: spec.workers.progressDeadline,
    startingSinceMs: Number.isFinite(stored) ? stored : undefined,
  });
}

/**
 * status.workers.startingSince while the workers start; once they do not, null only when one is
 * stored (a merge patch keeps what it does not name; an unconditional null would differ from the
 * stored status on every reconcile and cost a write each time).
 */
function startingSince(ms: number | undefined, stored: string | null | undefined) {
  if (ms !== undefined) return { startingSince: new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z') };
  return stored ? { startingSince: null } : {};
}

/**
 * Conditions of a pipeline whose table or topic belongs to another pipeline: no workers run (none
 * deployed, or the existing Deployment scaled to 0), and Ready carries the Conflict.
 */
export function conflictConditions(
  topic: ConditionInput,
  table: ConditionInput,
  deployment: DeploymentView | undefined,
  name: string,
): ConditionInput[] {
  const parts = [topic, table];
  const conflict = parts.find((c) => c.reason === CONFLICT) ?? table;
  const workers: ConditionInput = deployment
    ? workersCondition(deployment, 0, name)
    : {
        type: 'WorkersReady',
        status: 'False',
        reason: CONFLICT,
        message: `no workers deployed: ${conflict.message}`,
      };
  const ready = readyCondition([...parts, workers]);
  // A conflict waits for a human (or the owner's deletion): GitOps tools must report a failure.
  const stall = { reason: CONFLICT, message: conflict.message };
  return [
    ready,
    ...parts,
    workers,
    scalingCondition(deployment, false, 0),
    ...progressConditions(ready, stall),
  ];
}

/**
 * WorkersReady naming records lost to retention: a True condition takes the reason
 * RecordsExpiredUnconsumed (progress continues, so neither Ready nor Stalled changes); a False one
 * keeps its own reason, which explains why the workers fell behind, and adds the loss.
 */
export function withRetentionLoss(workers: ConditionInput, loss: string | undefined): ConditionInput {
  if (!loss) return workers;
  if (workers.status === 'True') return { ...workers, reason: 'RecordsExpiredUnconsumed', message: loss };
  return { ...workers, message: `${workers.message}; ${loss}` };
}
