/**
 * The two conditions GitOps tools read (pure). Flux, Argo CD's kstatus health and the cli-utils
 * applier judge a custom resource by sigs.k8s.io/cli-utils/pkg/kstatus: observedGeneration behind
 * metadata.generation or `Reconciling=True` -> InProgress; `Stalled=True` -> Failed; else a Ready
 * condition decides (False -> InProgress, True -> Current). Without Stalled, a pipeline whose
 * worker crash-loops or whose partition stopped moving would read InProgress forever and never
 * fail a deployment. Both are "abnormal-true": exactly one of them is True while Ready is not, and
 * Reconciling is also True beside a True Ready while serving workers are replaced by a rolling
 * update (as a Deployment stays Available while kstatus reads it InProgress).
 */
import type { ConditionInput } from './conditions';

/** Why progress stopped: a crash-looping worker, a partition that stopped moving, a terminal error. */
export interface StallCause {
  reason: string;
  message: string;
}

/** Reason of Stalled=False and Reconciling=False while the pipeline is healthy. */
export const NOT_STALLED = 'NoStall';

/**
 * A part of a Ready pipeline that is still changing (a rolling update of serving workers): Ready
 * stays True, Reconciling is True with this cause, so GitOps tools wait for it to finish.
 */
export type InProgress = StallCause;

/**
 * Stalled and Reconciling for a pipeline whose Ready is `ready`, stalled by `stall` if given;
 * `inProgress` makes Reconciling True beside a True Ready (Reconciling reads first in kstatus).
 */
export function progressConditions(
  ready: ConditionInput,
  stall?: StallCause,
  inProgress?: InProgress,
): ConditionInput[] {
  if (stall) {
    return [
      { type: 'Stalled', status: 'True', reason: stall.reason, message: stall.message },
      {
        type: 'Reconciling',
        status: 'False',
        reason: 'StalledProgress',
        message: 'progress has stopped; see Stalled',
      },
    ];
  }
  const stalled: ConditionInput = {
    type: 'Stalled',
    status: 'False',
    reason: NOT_STALLED,
    message: 'no worker crash loop and no stalled partition detected',
  };
  if (ready.status === 'True' && inProgress)
    return [stalled, { type: 'Reconciling', status: 'True', ...inProgress }];
  if (ready.status === 'True')
    return [stalled, { type: 'Reconciling', status: 'False', reason: ready.reason, message: ready.message }];
  return [stalled, { type: 'Reconciling', status: 'True', reason: ready.reason, message: ready.message }];
}
