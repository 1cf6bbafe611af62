/** The workers' PodDisruptionBudget: voluntary evictions (node drains) take one worker at a time. */
import type { ResolvedSpec } from '../api/defaults';
import { childMetadata, selectorLabels, workerName } from './labels';

/** The PodDisruptionBudget of a pipeline's workers (maxUnavailable 1). */
export function buildPodDisruptionBudget(spec: ResolvedSpec) {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: childMetadata(spec, workerName(spec.name)),
    spec: { maxUnavailable: 1, selector: { matchLabels: selectorLabels(spec.name) } },
  };
}
