/**
 * The worker Pods as the operator caches them: only what explains a worker that does not run —
 * readiness, restarts, the waiting reason and the last termination (exit code, reason and the
 * first line of the termination message the worker wrote: the worker image's termination.ts). A few
 * hundred bytes per pod whatever the pod spec holds.
 */
import { PIPELINE_LABEL } from '../desired/labels';

/** Cached view of a worker Pod. */
export interface PodView {
  metadata: { name: string; namespace: string; resourceVersion: string };
  /** Value of the logpipeline.io/pipeline label. */
  pipeline: string;
  ready: boolean;
  restartCount: number;
  /** state.waiting.reason of the container, e.g. CrashLoopBackOff. */
  waitingReason?: string;
  /** lastState.terminated of the container. */
  lastExit?: { exitCode: number; reason?: string; message?: string };
  /** metadata.creationTimestamp, ms since the epoch (the start of a new pod's start-up budget). */
  createdMs?: number;
  /** state.running.startedAt of the container, ms. */
  startedMs?: number;
  /** lastTransitionTime of the pod's Ready condition, ms (status/workers-starting.ts `wasReady`). */
  readyChangedMs?: number;
  /** state.waiting.message (not kept for CrashLoopBackOff, whose countdown changes every sync). */
  waitingMessage?: string;
  /** PodScheduled False: the scheduler's reason (Unschedulable) and message. */
  unscheduled?: { reason: string; message?: string };
  /** metadata.deletionTimestamp is set: the pod is going away (a rollout or a scale-down), no worker to wait for. */
  terminating?: boolean;
}

/** Longest termination message kept (the condition message must stay readable). */
export const MAX_POD_MESSAGE = 256;

/** The first non-empty line of `text`, at most MAX_POD_MESSAGE characters. */
export function firstLine(text: string | undefined): string | undefined {
  const line = (text ?? '')
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  if (!line) return undefined;
  return line.length > MAX_POD_MESSAGE ? `${line.slice(0, MAX_POD_MESSAGE - 1)}…` : line;
}

type Raw = Record<string, unknown>;
interface RawContainerStatus {
  ready?: boolean;
  restartCount?: number;
  state?: { waiting?: { reason?: string; message?: string }; running?: { startedAt?: string } };
  lastState?: { terminated?: { exitCode?: number; reason?: string; message?: string } };
}

/** Projects a Pod (its first container is the worker). */
export function toPodView(raw: Raw): PodView {
  const meta = raw.metadata as {
    name: string;
    namespace: string;
    resourceVersion: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
  };
  const status = (raw.status ?? {}) as {
    containerStatuses?: RawContainerStatus[];
    conditions?: RawPodCondition[];
  };
  const c = status.containerStatuses?.[0] ?? {};
  const t = c.lastState?.terminated;
  const waiting = c.state?.waiting;
  const cond = (type: string) => status.conditions?.find((x) => x.type === type);
  const scheduled = cond('PodScheduled');
  return {
    metadata: { name: meta.name, namespace: meta.namespace, resourceVersion: meta.resourceVersion },
    pipeline: meta.labels?.[PIPELINE_LABEL] ?? '',
    ready: c.ready === true,
    restartCount: c.restartCount ?? 0,
    waitingReason: c.state?.waiting?.reason,
    lastExit: t && {
      exitCode: t.exitCode ?? 0,
      reason: t.reason,
      message: firstLine(t.message),
    },
    ...optional({
      createdMs: timeMs(meta.creationTimestamp),
      startedMs: timeMs(c.state?.running?.startedAt),
      readyChangedMs: timeMs(cond('Ready')?.lastTransitionTime),
      waitingMessage: waiting?.reason === 'CrashLoopBackOff' ? undefined : firstLine(waiting?.message),
      unscheduled:
        scheduled?.status === 'False'
          ? { reason: scheduled.reason ?? 'Unschedulable', message: firstLine(scheduled.message) }
          : undefined,
      terminating: meta.deletionTimestamp ? true : undefined,
    }),
  };
}

interface RawPodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/** An RFC 3339 time in ms, undefined when absent or unreadable. */
function timeMs(text: string | undefined): number | undefined {
  const ms = text === undefined ? NaN : Date.parse(String(text));
  return Number.isFinite(ms) ? ms : undefined;
}

/** `o` without its undefined fields (the view stays small and compares by JSON). */
function optional<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** True when two views differ in anything but the resourceVersion (else no reconcile is needed). */
export function podChanged(a: PodView, b: PodView): boolean {
  const strip = (p: PodView) => JSON.stringify({ ...p, metadata: { ...p.metadata, resourceVersion: '' } });
  return strip(a) !== strip(b);
}
