/**
 * HPA-behaviour-like stabilization (pure): scale up to the LOWEST recommendation seen within the
 * scale-up window and down to the HIGHEST within the scale-down window, then limit the step. A
 * spike must persist for the whole window before it moves replicas, so noisy steady load never
 * flaps.
 *
 * Only the newest occurrence of each recommended value matters for "seen within the window", so
 * the history keeps one sample per distinct value: at most maxReplicas + 1 entries per pipeline,
 * whatever the window and poll interval (operator memory stays flat with many pipelines).
 */

/** One past recommendation. */
export interface Sample {
  at: number;
  replicas: number;
}

/** Window and step settings. */
export interface Behavior {
  scaleUpWindowMs: number;
  scaleDownWindowMs: number;
  maxScaleUpStep: number;
  maxScaleDownStep: number;
}

/** Returns the stabilized replica count and the history to keep (pruned to the longest window). */
export function stabilize(
  history: Sample[],
  next: Sample,
  current: number,
  b: Behavior,
): { replicas: number; history: Sample[] } {
  const horizon = next.at - Math.max(b.scaleUpWindowMs, b.scaleDownWindowMs);
  const kept = history.filter((s) => s.at >= horizon && s.replicas !== next.replicas);
  kept.push(next);
  let upCandidate = next.replicas;
  let downCandidate = next.replicas;
  for (const s of kept) {
    if (s.at >= next.at - b.scaleUpWindowMs) upCandidate = Math.min(upCandidate, s.replicas);
    if (s.at >= next.at - b.scaleDownWindowMs) downCandidate = Math.max(downCandidate, s.replicas);
  }
  let replicas = current;
  if (upCandidate > current) replicas = Math.min(upCandidate, current + Math.max(1, b.maxScaleUpStep));
  else if (downCandidate < current)
    replicas = Math.max(downCandidate, current - Math.max(1, b.maxScaleDownStep));
  return { replicas, history: kept };
}
