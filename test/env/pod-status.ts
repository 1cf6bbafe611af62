/**
 * What the kubelet would write into a worker Pod's status, computed for the local pod runner
 * (test/env/pod-runner.ts). Pure, except reading the termination-message and log files of an
 * exited container, as the kubelet does.
 *
 * Kubelet semantics copied here (restartPolicy Always, the Deployment default): an exited container
 * is restarted in place with restartCount + 1; the first restart is immediate, each following one
 * waits an exponential back-off (10 s, 20 s, 40 s, ... capped at 5 min; reset after 10 min of
 * running) during which the container is `waiting` with reason `CrashLoopBackOff`;
 * `lastState.terminated` keeps the exit code, a reason (`Completed` for 0, `OOMKilled`, else
 * `Error`) and the message from the termination-message file, or with
 * `FallbackToLogsOnError` and a failed exit and no message, the tail of the log (last 80 lines,
 * at most 2048 bytes). An image the runner is told cannot be pulled leaves the container `waiting`
 * with reason `ImagePullBackOff` and the kubelet's message, never started.
 */
import fs from 'node:fs';

/** Back-off tuning (kubelet defaults: 10 s base, 5 min cap). */
export interface BackoffSettings {
  baseMs: number;
  capMs: number;
}

/** The kubelet's crash back-off defaults. */
export const KUBELET_BACKOFF: BackoffSettings = { baseMs: 10_000, capMs: 300_000 };

/** How long a container must run before its back-off is forgotten (kubelet: 10 min). */
export const BACKOFF_RESET_MS = 600_000;

/** One container instance's end, as the kubelet records it. */
export interface Terminated {
  exitCode: number;
  signal?: string;
  reason: 'Completed' | 'Error' | 'OOMKilled';
  message?: string;
  startedAt: string;
  finishedAt: string;
}

/** What the runner knows about one pod's single container. */
export interface ContainerRecord {
  name: string;
  image: string;
  restartCount: number;
  /** Set while the process runs. */
  startedAt?: string;
  /** Set while the container waits for its restart. */
  restartAt?: number;
  lastTerminated?: Terminated;
  ready: boolean;
  /** Since when the probe of a ready container fails (it stays ready until failureThreshold). */
  failingSince?: number;
  /** Set while the image cannot be pulled: the kubelet's back-off message (ImagePullBackOff). */
  pullBackOff?: string;
  /** Readiness as last reported, and when that last flipped (Ready's lastTransitionTime). */
  reportedReady?: boolean;
  readyChangedAt?: string;
}

/** A readinessProbe's timing (core/v1 Probe): the kubelet probes every periodSeconds. */
export interface ProbeTiming {
  periodSeconds?: number;
  failureThreshold?: number;
}

/**
 * Readiness after one probe, as the kubelet decides it: a success makes the container ready at
 * once (successThreshold 1); a ready container turns unready only after failureThreshold failures
 * in a row, probed periodSeconds apart (kubelet defaults 10 s and 3), so a blip shorter than that
 * (a worker rejoining its consumer group) is no unready pod. The runner probes more often than the
 * period, so the failures are counted as the time they span: (failureThreshold - 1) periods.
 */
export function probedReadiness(c: ContainerRecord, ok: boolean, now: number, t: ProbeTiming = {}): void {
  if (ok) {
    c.ready = true;
    c.failingSince = undefined;
    return;
  }
  if (!c.ready) return;
  c.failingSince ??= now;
  const spanMs = ((t.failureThreshold ?? 3) - 1) * (t.periodSeconds ?? 10) * 1000;
  if (now - c.failingSince >= spanMs) {
    c.ready = false;
    c.failingSince = undefined;
  }
}

/** The scheduler's message for a pod that does not fit on the bed's single node. */
export const NO_ROOM_MESSAGE = '0/1 nodes are available: 1 Too many pods.';

/**
 * Moves Ready's lastTransitionTime when readiness flips, as the kubelet's status manager does
 * (its first Ready=False is written before the container starts, so a pod that never was ready
 * keeps a time before its container's startedAt).
 */
export function noteReadiness(c: ContainerRecord, now: number): void {
  const ready = c.ready && !!c.startedAt;
  if (ready === (c.reportedReady ?? false)) return;
  c.reportedReady = ready;
  c.readyChangedAt = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The status of a pod the scheduler cannot place (no container status yet, like a real Pending pod). */
export function unscheduledPodStatus(createdAt: string) {
  return {
    phase: 'Pending',
    conditions: [
      {
        type: 'PodScheduled',
        status: 'False',
        reason: 'Unschedulable',
        message: NO_ROOM_MESSAGE,
        lastTransitionTime: new Date(createdAt),
      },
    ],
  };
}

/** Delay before restarting a container that has already been restarted `restartCount` times. */
export function restartDelayMs(restartCount: number, b: BackoffSettings = KUBELET_BACKOFF): number {
  if (restartCount <= 0) return 0;
  return Math.min(b.capMs, b.baseMs * 2 ** Math.min(restartCount - 1, 30));
}

/** The kubelet's termination reason for an exit. */
export function terminationReason(
  exitCode: number,
  signal: string | null,
  oomKilled: boolean,
): Terminated['reason'] {
  if (oomKilled) return 'OOMKilled';
  return exitCode === 0 && !signal ? 'Completed' : 'Error';
}

/** The termination message: the file's content, else (FallbackToLogsOnError, failed exit) the log tail. */
export function readTerminationMessage(
  messageFile: string,
  logFile: string,
  policy: string | undefined,
  failed: boolean,
): string | undefined {
  const fromFile = readTail(messageFile, 4096)?.trim();
  if (fromFile) return fromFile;
  if (policy !== 'FallbackToLogsOnError' || !failed) return undefined;
  const tail = readTail(logFile, 2048);
  if (!tail) return undefined;
  return tail.split('\n').slice(-80).join('\n').trim() || undefined;
}

function readTail(file: string, maxBytes: number): string | undefined {
  try {
    const size = fs.statSync(file).size;
    const fd = fs.openSync(file, 'r');
    try {
      const len = Math.min(size, maxBytes);
      const buf = Buffer.alloc(len);
      fs.readSync(fd, buf, 0, len, size - len);
      return buf.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

function containerState(c: ContainerRecord, podName: string, now: number): Record<string, unknown> {
  if (c.startedAt) return { running: { startedAt: new Date(c.startedAt) } };
  if (c.restartAt !== undefined && c.lastTerminated) {
    const secs = Math.max(0, Math.round((c.restartAt - now) / 1000));
    return {
      waiting: {
        reason: 'CrashLoopBackOff',
        message: `back-off ${secs}s restarting failed container=${c.name} pod=${podName}`,
      },
    };
  }
  if (c.pullBackOff) return { waiting: { reason: 'ImagePullBackOff', message: c.pullBackOff } };
  return { waiting: { reason: 'ContainerCreating' } };
}

/** The Pod status the kubelet would report. */
export function podStatus(podName: string, c: ContainerRecord, startTime: string, now: number) {
  const ready = c.ready && !!c.startedAt;
  const condition = (type: string, ok: boolean, reason?: string) => ({
    type,
    status: ok ? 'True' : 'False',
    lastTransitionTime: new Date(c.readyChangedAt ?? startTime),
    ...(ok ? {} : { reason, message: `containers with unready status: [${c.name}]` }),
  });
  return {
    phase: 'Running',
    hostIP: '127.0.0.1',
    podIP: '127.0.0.1',
    startTime: new Date(startTime),
    conditions: [
      { type: 'PodScheduled', status: 'True', lastTransitionTime: new Date(startTime) },
      { type: 'Initialized', status: 'True', lastTransitionTime: new Date(startTime) },
      condition('ContainersReady', ready, 'ContainersNotReady'),
      condition('Ready', ready, 'ContainersNotReady'),
    ],
    containerStatuses: [
      {
        name: c.name,
        image: c.image,
        imageID: '',
        ready,
        started: !!c.startedAt,
        restartCount: c.restartCount,
        state: containerState(c, podName, now),
        lastState: c.lastTerminated ? { terminated: stripSignal(c.lastTerminated) } : {},
      },
    ],
  };
}

/** The client library serializes Date objects; the record keeps RFC 3339 strings. */
function stripSignal(t: Terminated) {
  const { signal: _s, startedAt, finishedAt, ...rest } = t;
  return { ...rest, startedAt: new Date(startedAt), finishedAt: new Date(finishedAt) };
}
