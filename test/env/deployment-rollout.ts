/**
 * What the Deployment controller decides for the local pod runner (test/env/pod-runner.ts), pure:
 * the RollingUpdate steps (pkg/controller/deployment/rolling.go: the new ReplicaSet grows within
 * `replicas + maxSurge`, old pods go only while `replicas - maxUnavailable` stay available,
 * unready old pods first) and the status it writes, with the `Available` and `Progressing`
 * conditions (progress.go: `NewReplicaSetCreated` when a template is new, `ReplicaSetUpdated` on
 * every step, `NewReplicaSetAvailable` once complete and then no more checks, `False
 * ProgressDeadlineExceeded` when no step happened for progressDeadlineSeconds). Pods are ready
 * at once when their readiness probe passes (no minReadySeconds): available = ready.
 */

/** A pod as the planner sees it. */
export interface PlannedPod {
  ready: boolean;
}

/** maxSurge and maxUnavailable of a Deployment, resolved against `replicas` as the controller does. */
export interface RolloutBounds {
  maxSurge: number;
  maxUnavailable: number;
}

/** One Deployment condition as the controller writes it. */
export interface DeploymentCondition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
  lastUpdateTime: string;
  lastTransitionTime: string;
}

/** The status counts (apps/v1 DeploymentStatus). */
export interface DeploymentCounts {
  observedGeneration?: number;
  replicas: number;
  updatedReplicas: number;
  readyReplicas: number;
  availableReplicas: number;
  unavailableReplicas: number;
}

type IntOrPercent = number | string | undefined;

function resolve(value: IntOrPercent, fallback: string, replicas: number, roundUp: boolean): number {
  const v = value ?? fallback;
  if (typeof v === 'number') return v;
  const pct = Number(v.replace(/%$/, ''));
  const exact = (pct * replicas) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/** Resolves the strategy (defaults 25 % / 25 %; both 0 would deadlock, so maxUnavailable is then 1). */
export function rolloutBounds(
  strategy: { rollingUpdate?: { maxSurge?: IntOrPercent; maxUnavailable?: IntOrPercent } } | undefined,
  replicas: number,
): RolloutBounds {
  const maxSurge = resolve(strategy?.rollingUpdate?.maxSurge, '25%', replicas, true);
  const maxUnavailable = resolve(strategy?.rollingUpdate?.maxUnavailable, '25%', replicas, false);
  return { maxSurge, maxUnavailable: maxSurge === 0 && maxUnavailable === 0 ? 1 : maxUnavailable };
}

/**
 * One rolling-update step: how many pods of the current template to create and which old pods to
 * delete. `current` are pods of the current template, `old` of earlier ones.
 */
export function planRollingUpdate<P extends PlannedPod>(
  want: number,
  bounds: RolloutBounds,
  current: readonly P[],
  old: readonly P[],
): { create: number; remove: P[] } {
  const total = current.length + old.length;
  const create = Math.max(0, Math.min(want - current.length, want + bounds.maxSurge - total));
  const minAvailable = want - bounds.maxUnavailable;
  const newUnavailable = current.filter((p) => !p.ready).length;
  let budget = total - minAvailable - newUnavailable;
  const remove: P[] = [];
  for (const p of old.filter((x) => !x.ready)) {
    if (budget <= 0) break;
    remove.push(p);
    budget--;
  }
  const available = current.filter((p) => p.ready).length + old.filter((p) => p.ready).length;
  let scaleDown = available - minAvailable;
  for (const p of old.filter((x) => x.ready)) {
    if (scaleDown <= 0) break;
    remove.push(p);
    scaleDown--;
  }
  return { create, remove };
}

/** The status counts for the pods the runner keeps. */
export function deploymentCounts(
  want: number,
  generation: number | undefined,
  current: readonly PlannedPod[],
  old: readonly PlannedPod[],
): DeploymentCounts {
  const ready = current.filter((p) => p.ready).length + old.filter((p) => p.ready).length;
  return {
    observedGeneration: generation,
    replicas: current.length + old.length,
    updatedReplicas: current.length,
    readyReplicas: ready,
    availableReplicas: ready,
    unavailableReplicas: Math.max(0, want - ready),
  };
}

/** What the condition update reads besides the counts. */
export interface ConditionInput {
  want: number;
  bounds: RolloutBounds;
  /** The name of the current template's ReplicaSet, for the messages. */
  replicaSet: string;
  /** True in the step that saw this template first (the controller creates its ReplicaSet). */
  newTemplate: boolean;
  progressDeadlineSeconds?: number;
  nowMs: number;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function set(
  prev: readonly DeploymentCondition[],
  next: Omit<DeploymentCondition, 'lastUpdateTime' | 'lastTransitionTime'>,
  nowMs: number,
  touch: boolean,
): DeploymentCondition {
  const old = prev.find((c) => c.type === next.type);
  const unchanged = old && old.status === next.status && old.reason === next.reason;
  if (unchanged && !touch) return old;
  return {
    ...next,
    lastUpdateTime: iso(nowMs),
    lastTransitionTime: old && old.status === next.status ? old.lastTransitionTime : iso(nowMs),
  };
}

/** The Available and Progressing conditions after a step from `before` to `after` counts. */
export function deploymentConditions(
  prev: readonly DeploymentCondition[],
  before: Partial<DeploymentCounts>,
  after: DeploymentCounts,
  i: ConditionInput,
): DeploymentCondition[] {
  const minimum = after.availableReplicas >= i.want - i.bounds.maxUnavailable;
  const available = set(
    prev,
    minimum
      ? {
          type: 'Available',
          status: 'True',
          reason: 'MinimumReplicasAvailable',
          message: 'Deployment has minimum availability.',
        }
      : {
          type: 'Available',
          status: 'False',
          reason: 'MinimumReplicasUnavailable',
          message: 'Deployment does not have minimum availability.',
        },
    i.nowMs,
    false,
  );
  return [available, progressing(prev, before, after, i)];
}

function progressing(
  prev: readonly DeploymentCondition[],
  before: Partial<DeploymentCounts>,
  after: DeploymentCounts,
  i: ConditionInput,
): DeploymentCondition {
  const rs = `ReplicaSet "${i.replicaSet}"`;
  let base = prev.find((c) => c.type === 'Progressing');
  if (i.newTemplate || !base) {
    const created = { type: 'Progressing', status: 'True', reason: 'NewReplicaSetCreated' } as const;
    base = set(prev, { ...created, message: `Created new replica set "${i.replicaSet}"` }, i.nowMs, true);
  }
  const cond = (status: 'True' | 'False', reason: string, message: string, touch = false) =>
    set([base], { type: 'Progressing', status, reason, message }, i.nowMs, touch);
  // Complete once: later scales are no rollout, and no deadline applies (progress.go).
  if (base.reason === 'NewReplicaSetAvailable' && after.replicas === after.updatedReplicas) return base;
  const complete =
    after.updatedReplicas === i.want && after.replicas === i.want && after.availableReplicas === i.want;
  if (complete) return cond('True', 'NewReplicaSetAvailable', `${rs} has successfully progressed.`);
  const oldPods = (c: Partial<DeploymentCounts>) => (c.replicas ?? 0) - (c.updatedReplicas ?? 0);
  const moved =
    after.updatedReplicas > (before.updatedReplicas ?? 0) ||
    oldPods(after) < oldPods(before) ||
    after.readyReplicas > (before.readyReplicas ?? 0) ||
    after.availableReplicas > (before.availableReplicas ?? 0);
  if (moved) return cond('True', 'ReplicaSetUpdated', `${rs} is progressing.`, true);
  const deadline = i.progressDeadlineSeconds;
  const since = Date.parse(base.lastUpdateTime);
  if (base.status === 'True' && deadline !== undefined && since + deadline * 1000 < i.nowMs)
    return cond('False', 'ProgressDeadlineExceeded', `${rs} has timed out progressing.`);
  return base;
}

/** The Deployment fields the status reads. */
export interface DeploymentInput {
  metadata?: { name?: string; generation?: number };
  spec?: {
    replicas?: number;
    progressDeadlineSeconds?: number;
    strategy?: Parameters<typeof rolloutBounds>[0];
  };
  status?: Partial<DeploymentCounts> & { conditions?: object[] };
}

/** A condition as read back through the client (times as Date objects) in the runner's spelling. */
function readCondition(raw: object): DeploymentCondition {
  const c = raw as Record<string, unknown>;
  const time = (v: unknown) => iso(new Date(v as string | Date).getTime());
  return {
    type: String(c.type),
    status: c.status === 'True' ? 'True' : 'False',
    reason: String(c.reason ?? ''),
    message: String(c.message ?? ''),
    lastUpdateTime: time(c.lastUpdateTime),
    lastTransitionTime: time(c.lastTransitionTime),
  };
}

/**
 * The status the Deployment controller would write for `d` whose pods of the current template
 * (`hash`, first seen in this step when `newTemplate`) are `current` and of earlier ones `old`;
 * undefined when the stored status already says exactly that (no write).
 */
export function deploymentStatus(
  d: DeploymentInput,
  hash: string,
  newTemplate: boolean,
  current: readonly PlannedPod[],
  old: readonly PlannedPod[],
  nowMs: number,
): Record<string, unknown> | undefined {
  const want = d.spec?.replicas ?? 1;
  const before = d.status ?? {};
  const counts = deploymentCounts(want, d.metadata?.generation, current, old);
  const prev = (before.conditions ?? []).map(readCondition);
  const conditions = deploymentConditions(prev, before, counts, {
    want,
    bounds: rolloutBounds(d.spec?.strategy, want),
    replicaSet: `${d.metadata?.name}-${hash.slice(0, 10)}`,
    newTemplate,
    progressDeadlineSeconds: d.spec?.progressDeadlineSeconds,
    nowMs,
  });
  const same =
    Object.entries(counts).every(
      ([k, v]) =>
        before[k as keyof DeploymentCounts] === v ||
        (v === 0 && before[k as keyof DeploymentCounts] === undefined),
    ) && JSON.stringify(conditions) === JSON.stringify(prev);
  if (same) return undefined;
  // The client serializes Date objects (test/env/pod-status.ts).
  const written = conditions.map((c) => ({
    ...c,
    lastUpdateTime: new Date(c.lastUpdateTime),
    lastTransitionTime: new Date(c.lastTransitionTime),
  }));
  return { ...before, ...counts, conditions: written };
}
