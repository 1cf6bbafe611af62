/**
 * One local pod's process side for the pod runner (test/env/pod-runner.ts, a kubelet stand-in for
 * tests and the demo): the LocalPod record, the argv a container maps to on this host, the
 * receiver config rewritten for a shared host network, the /readyz probe and the SIGTERM/SIGKILL
 * stop. Separate from the runner because this is what happens to one process; the runner decides
 * how many there are and mirrors them into Pod and Deployment objects.
 */
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import {
  BACKOFF_RESET_MS,
  probedReadiness,
  readTerminationMessage,
  restartDelayMs,
  terminationReason,
  type BackoffSettings,
  type ContainerRecord,
  type ProbeTiming,
} from './pod-status';
import { localPath } from './pod-files';
import { WORKER_NODE_ARGS } from '../../common/src/worker-runtime';

const DIST = path.resolve(
  __dirname,
  fs.existsSync(path.join(__dirname, '../../dist')) ? '../../dist' : '../../../dist',
);
/** Root the image's relative paths (`dist/...`) resolve against: the image's working directory. */
const IMAGE_ROOT = path.dirname(DIST);
const WORKER_MAIN = path.join(DIST, 'consumer/src/main.js');

/**
 * The local argv for a container: its `command` (node -> this Node, relative scripts -> the local
 * dist) or the worker image's entrypoint, then its args.
 */
export function localArgv(command: readonly string[] | undefined, args: readonly string[]): string[] {
  if (!command || command.length === 0) return [...WORKER_NODE_ARGS, WORKER_MAIN, ...args];
  const [exe, ...rest] = command;
  if (path.basename(exe) !== 'node') throw new Error(`the pod runner runs node containers only, not ${exe}`);
  return [...rest.map((a) => (a.startsWith('dist/') ? path.join(IMAGE_ROOT, a) : a)), ...args];
}

/** A Deployment's pod as the runner keeps it: its process, files, container record and Pod object. */
export interface LocalPod {
  name: string;
  namespace: string;
  child?: ChildProcess;
  port: number;
  templateHash: string;
  logFile: string;
  messageFile: string;
  messagePolicy?: string;
  /** How to (re)start the process: node's argv (script first). */
  argv: string[];
  /** A receiver's mounted config file (its probe port, brokers and file paths are rewritten per pod). */
  receiverConfig?: string;
  /** [container mount path, local copy] of the pod's volumes. */
  mounts: Array<[string, string]>;
  env: Record<string, string>;
  container: ContainerRecord;
  /** Back-off steps since the last long run (the kubelet forgets old crashes after 10 min). */
  backoffSteps: number;
  startTime: string;
  /** True while the pod waits for room on the node (Pending, not scheduled, no process). */
  unscheduled?: boolean;
  /** Set once the runner itself stops the pod (scale-down, rollout): no restart. */
  deleting: boolean;
  object?: V1Pod;
  lastStatus?: string;
  /** The container's readinessProbe timing (the kubelet's defaults when absent). */
  readinessProbe?: ProbeTiming;
}

/** Whether the process is alive (started and neither exited nor killed by a signal). */
export const isRunning = (c?: ChildProcess) => !!c && c.exitCode === null && c.signalCode === null;

/** Epoch milliseconds as the seconds-precision RFC 3339 time Kubernetes writes. */
export function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Pods share this host: the receiver's probe port (and the demo's broker override) go into its
 * file, and the paths it names under mounted volumes (TLS cert, key, client CA; Kafka CA) point
 * at the runner's local copies.
 */
export function localizeReceiverConfig(
  file: string,
  port: number,
  mounts: Array<[string, string]>,
  brokers: string | undefined,
): void {
  if (!fs.existsSync(file)) return;
  const cfg = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    httpPort: number;
    kafka: { brokers: string[]; tls?: { caFile?: string } };
    tls?: { certFile: string; keyFile: string; caFile?: string };
  };
  cfg.httpPort = port;
  const local = (f: string | undefined) => (f === undefined ? undefined : localPath(f, mounts));
  if (cfg.tls)
    cfg.tls = {
      ...cfg.tls,
      certFile: localPath(cfg.tls.certFile, mounts),
      keyFile: localPath(cfg.tls.keyFile, mounts),
      ...(cfg.tls.caFile ? { caFile: local(cfg.tls.caFile) } : {}),
    };
  if (cfg.kafka.tls?.caFile) cfg.kafka.tls.caFile = local(cfg.kafka.tls.caFile);
  if (brokers) cfg.kafka.brokers = brokers.split(',');
  fs.writeFileSync(file, JSON.stringify(cfg, null, 2));
}

/**
 * Sets the pod's readiness from its /readyz (not ready when the process is not running), with the
 * kubelet's failureThreshold for a ready container (pod-status.ts `probedReadiness`).
 */
export async function probe(p: LocalPod, now = Date.now()): Promise<void> {
  if (!isRunning(p.child)) {
    p.container.ready = false;
    p.container.failingSince = undefined;
    return;
  }
  let ok = false;
  try {
    const res = await fetch(`http://127.0.0.1:${p.port}/readyz`, { signal: AbortSignal.timeout(1000) });
    ok = res.ok;
  } catch {
    ok = false;
  }
  probedReadiness(p.container, ok && isRunning(p.child), now, p.readinessProbe);
}

/** Stops the process: SIGTERM, SIGKILL after 30 s; resolves once it has exited. */
export async function killProcess(child: ChildProcess): Promise<void> {
  if (!isRunning(child)) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

/**
 * Records an exit of the pod's current process as the kubelet would (lastState.terminated with the
 * termination message) and, unless the runner is stopping the pod, when to restart it (back-off).
 */
export function recordExit(
  p: LocalPod,
  child: ChildProcess,
  startedAt: number,
  code: number | null,
  signal: NodeJS.Signals | null,
  backoff: BackoffSettings,
): void {
  if (p.child !== child) return;
  const now = Date.now();
  const exitCode = code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0);
  const failed = exitCode !== 0;
  p.container.lastTerminated = {
    exitCode,
    reason: terminationReason(exitCode, signal, false),
    message: readTerminationMessage(p.messageFile, p.logFile, p.messagePolicy, failed),
    startedAt: iso(startedAt),
    finishedAt: iso(now),
  };
  p.container.startedAt = undefined;
  p.container.ready = false;
  if (p.deleting) return;
  if (now - startedAt >= BACKOFF_RESET_MS) p.backoffSteps = 0;
  p.container.restartAt = now + restartDelayMs(p.backoffSteps, backoff);
  p.backoffSteps++;
}

/**
 * The Pod object of one of the Deployment's pods: the template's labels, owned by the Deployment,
 * on `nodeName` (none: not scheduled yet).
 */
export function podObject(d: V1Deployment, name: string, nodeName: string | undefined): V1Pod {
  const template = d.spec!.template;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: d.metadata!.namespace!,
      labels: template.metadata?.labels,
      annotations: template.metadata?.annotations,
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: d.metadata!.name!,
          uid: d.metadata!.uid!,
          controller: true,
        },
      ],
    },
    spec: { ...template.spec!, ...(nodeName ? { nodeName } : {}) },
  };
}
