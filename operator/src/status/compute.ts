/**
 * Assembles a pipeline's status from what one reconcile observed: the Deployment as stored, the
 * external parts' outcomes and the autoscaler's decision. Pure: no I/O.
 */
import type { ResolvedSpec } from '../api/defaults';
import type { LogPipelineStatus } from '../api/types';
import type { DeploymentView } from '../controller/views';
import { selectorString, workerName } from '../desired/labels';
import type { ParserCoverage } from '../apply/parser-coverage';
import {
  parserCoverageCondition,
  readyCondition,
  scalingCondition,
  workersCondition,
  type ConditionInput,
} from './conditions';

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

/** Conditions (Ready, TopicReady, TableReady, WorkersReady, Scaling) and the other status fields. */
export function computeStatus(
  spec: ResolvedSpec,
  deployment: DeploymentView,
  topic: PartObservation,
  table: PartObservation,
  scaling: ScalingObservation | undefined,
): { conditions: ConditionInput[]; extra: LogPipelineStatus } {
  const auto = spec.workers.autoscaling.enabled;
  const desired = auto ? deployment.replicas : spec.workers.replicas;
  const workers = workersCondition(deployment, desired, workerName(spec.name));
  const scalingCond: ConditionInput = scaling
    ? { type: 'Scaling', status: scaling.status, reason: scaling.reason, message: scaling.message }
    : scalingCondition(deployment, auto, desired);
  const { parserCoverage, ...tableObserved } = (table.observed ?? {}) as {
    parserCoverage?: ParserCoverage;
  };
  const conditions = [
    readyCondition([topic.condition, table.condition, workers]),
    topic.condition,
    table.condition,
    workers,
    scalingCond,
    parserCoverageCondition(parserCoverage, spec.coverage.maxMissingSrcIpPercent),
  ];
  const extra: LogPipelineStatus = {
    workers: {
      desired,
      current: deployment.status.replicas ?? 0,
      ready: deployment.status.readyReplicas ?? 0,
      selector: selectorString(spec.name),
    },
    ...(topic.observed ? { topic: topic.observed } : {}),
    ...(table.observed ? { table: tableObserved } : {}),
    ...(parserCoverage ? { parserCoverage } : {}),
    ...(scaling?.lag ? { lag: scaling.lag } : {}),
  };
  return { conditions, extra };
}
