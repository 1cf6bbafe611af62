/**
 * THE LOCAL POD RUNNER — A STAND-IN FOR KUBELET IN TESTS AND THE DEMO ONLY.
 *
 * The test bed has no kubelet, so nothing would run the worker Deployments the operator creates.
 * This runner watches them (label app.kubernetes.io/name=logpipeline-worker, and the syslog
 * receivers, logpipeline-ingest) and keeps `spec.replicas` local processes running with the same
 * configuration as the pod template: the image's entrypoint (`node dist/consumer/src/main.js`) or
 * the container's `command` mapped to the local dist, ConfigMap/Secret volumes written to a temp
 * dir, env values and secretKeyRefs resolved from the apiserver. Pods share this host's network,
 * so each gets its own probe port (for a receiver: rewritten into its mounted config); a
 * receiver's listener ports are bound as configured, so run one replica per port set. Like the Deployment controller plus kubelet, it
 * creates a Pod object per process (labels of the template) and fills its status as the kubelet
 * does (test/env/pod-status.ts): restartCount, `CrashLoopBackOff` with back-off restarts,
 * `lastState.terminated` with the termination message, readiness from /readyz and the pod
 * conditions; and it writes the Deployment's status replica fields. A changed pod template
 * (config-hash annotation) replaces the pods, like a rollout. It is not a kubelet: no images, no
 * liveness probes, no limits.
 */
import { AppsV1Api, CoreV1Api, KubeConfig, type V1Deployment, type V1Pod } from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  BACKOFF_RESET_MS,
  KUBELET_BACKOFF,
  podStatus,
  readTerminationMessage,
  restartDelayMs,
  terminationReason,
  type BackoffSettings,
  type ContainerRecord,
} from './pod-status';
import { localPath, renderPodFiles } from './pod-files';
import { freePort } from './process';

const DIST = path.resolve(
  __dirname,
  fs.existsSync(path.join(__dirname, '../../dist')) ? '../../dist' : '../../../dist',
);
/** Root the image's relative paths (`dist/...`) resolve against: the image's working directory. */
const IMAGE_ROOT = path.dirname(DIST);
const WORKER_MAIN = path.join(DIST, 'consumer/src/main.js');
const SELECTOR = 'app.kubernetes.io/name in (logpipeline-worker,logpipeline-ingest)';

/**
 * The local argv for a container: its `command` (node -> this Node, relative scripts -> the local
 * dist) or the worker image's entrypoint, then its args.
 */
export function localArgv(command: readonly string[] | undefined, args: readonly string[]): string[] {
  if (!command || command.length === 0) return [WORKER_MAIN, ...args];
  const [exe, ...rest] = command;
  if (path.basename(exe) !== 'node') throw new Error(`the pod runner runs node containers only, not ${exe}`);
  return [...rest.map((a) => (a.startsWith('dist/') ? path.join(IMAGE_ROOT, a) : a)), ...args];
}
/** The node name the runner's pods are "scheduled" to. */
export const LOCAL_NODE = 'local-pod-runner';

interface LocalPod {
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
  /** Set once the runner itself stops the pod (scale-down, rollout): no restart. */
  deleting: boolean;
  object?: V1Pod;
  lastStatus?: string;
}

/** Options of the runner. */
export interface PodRunnerOptions {
  kubeconfig: string;
  /** Directory for rendered configs and worker logs. */
  dir?: string;
  /** How often Deployments are listed (a poll keeps the stand-in simple and self-healing). */
  intervalMs?: number;
  /** Extra env for every worker (e.g. LP_KAFKA_BROKERS overrides in the demo). */
  env?: Record<string, string>;
  /** Crash back-off (kubelet: 10 s doubling to 5 min); tests shorten the base. */
  crashBackoff?: Partial<BackoffSettings>;
}

const isRunning = (c?: ChildProcess) => !!c && c.exitCode === null && c.signalCode === null;

/** Keeps local worker processes and their Pods in line with the worker Deployments; stop() ends them all. */
export class PodRunner {
  private readonly apps: AppsV1Api;
  private readonly core: CoreV1Api;
  private readonly pods = new Map<string, LocalPod[]>();
  private readonly dir: string;
  private readonly backoff: BackoffSettings;
  private timer?: NodeJS.Timeout;
  private running = false;
  private syncing = false;

  constructor(private readonly opts: PodRunnerOptions) {
    const kc = new KubeConfig();
    kc.loadFromFile(opts.kubeconfig);
    this.apps = kc.makeApiClient(AppsV1Api);
    this.core = kc.makeApiClient(CoreV1Api);
    this.dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'logpipeline-pods-'));
    this.backoff = { ...KUBELET_BACKOFF, ...opts.crashBackoff };
  }

  /** Starts the sync loop. */
  start(): void {
    this.running = true;
    const tick = () => {
      if (!this.running) return;
      this.sync()
        .catch(() => undefined) // apiserver down: try again next tick, like a kubelet would
        .finally(() => {
          if (this.running) this.timer = setTimeout(tick, this.opts.intervalMs ?? 1000);
        });
    };
    tick();
  }

  /** Number of pods (running or waiting for a restart) of a Deployment (for tests). */
  count(namespace: string, name: string): number {
    return this.pods.get(`${namespace}/${name}`)?.length ?? 0;
  }

  /** Probe ports (/metrics, /readyz) and log files of a Deployment's pods (for tests). */
  podsOf(namespace: string, name: string): Array<{ port: number; logFile: string }> {
    return (this.pods.get(`${namespace}/${name}`) ?? []).map((p) => ({ port: p.port, logFile: p.logFile }));
  }

  /** Stops the loop and every worker (SIGTERM, so they drain and commit) and deletes their Pods. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    while (this.syncing) await new Promise((r) => setTimeout(r, 50));
    await Promise.all([...this.pods.values()].flat().map((p) => this.deletePod(p, 2_000)));
    this.pods.clear();
  }

  private async sync(): Promise<void> {
    this.syncing = true;
    try {
      const list = await this.apps.listDeploymentForAllNamespaces({ labelSelector: SELECTOR });
      const seen = new Set<string>();
      for (const d of list.items) {
        const key = `${d.metadata!.namespace}/${d.metadata!.name}`;
        seen.add(key);
        await this.reconcileDeployment(key, d);
      }
      for (const [key, pods] of this.pods) {
        if (!seen.has(key)) {
          await Promise.all(pods.map((p) => this.deletePod(p)));
          this.pods.delete(key);
        }
      }
    } finally {
      this.syncing = false;
    }
  }

  private async reconcileDeployment(key: string, d: V1Deployment): Promise<void> {
    const want = d.spec?.replicas ?? 1;
    const hash = crypto
      .createHash('sha256')
      .update(JSON.stringify(d.spec?.template ?? {}))
      .digest('hex');
    let pods = this.pods.get(key) ?? [];
    const stale = pods.filter((p) => p.templateHash !== hash);
    if (stale.length > 0) {
      await Promise.all(stale.map((p) => this.deletePod(p)));
      pods = pods.filter((p) => p.templateHash === hash);
    }
    // Like the ReplicaSet controller: scale down the pods that are not ready first.
    pods.sort((a, b) => Number(b.container.ready) - Number(a.container.ready));
    while (pods.length > want) await this.deletePod(pods.pop()!);
    while (pods.length < want) pods.push(await this.createPod(d, hash));
    this.pods.set(key, pods);
    const now = Date.now();
    for (const p of pods) {
      if (!isRunning(p.child) && p.container.restartAt !== undefined && now >= p.container.restartAt)
        this.restart(p);
    }
    await Promise.all(pods.map((p) => probe(p)));
    await Promise.all(pods.map((p) => this.writePodStatus(p)));
    await this.writeStatus(d, pods);
  }

  private async createPod(d: V1Deployment, hash: string): Promise<LocalPod> {
    const ns = d.metadata!.namespace!;
    const name = `${d.metadata!.name}-${hash.slice(0, 10)}-${crypto.randomBytes(3).toString('hex').slice(0, 5)}`;
    const podDir = path.join(this.dir, `${ns}-${name}-${Date.now()}`);
    fs.mkdirSync(podDir, { recursive: true });
    const template = d.spec!.template;
    const container = template.spec!.containers[0];
    const { env, args, messageFile, mounts } = await renderPodFiles(
      this.core,
      ns,
      container,
      template.spec!,
      podDir,
      name,
    );
    const object = await this.core.createNamespacedPod({
      namespace: ns,
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name,
          namespace: ns,
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
        spec: { ...template.spec!, nodeName: LOCAL_NODE },
      },
    });
    const pod: LocalPod = {
      name,
      namespace: ns,
      port: 0,
      templateHash: hash,
      logFile: path.join(podDir, 'worker.log'),
      messageFile,
      messagePolicy: container.terminationMessagePolicy,
      argv: localArgv(container.command, args),
      receiverConfig: container.command ? args[args.indexOf('--config') + 1] : undefined,
      mounts,
      env,
      container: { name: container.name, image: container.image ?? '', restartCount: 0, ready: false },
      backoffSteps: 0,
      startTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      deleting: false,
      object,
    };
    pod.port = await freePort();
    this.spawn(pod);
    return pod;
  }

  /** Starts the pod's process (a fresh termination-message file each time, like a new container). */
  private spawn(p: LocalPod): void {
    fs.writeFileSync(p.messageFile, '');
    p.env.LP_HTTP_PORT = String(p.port);
    if (p.receiverConfig) this.localizeReceiverConfig(p.receiverConfig, p.port, p.mounts);
    const log = fs.openSync(p.logFile, 'a');
    const child = spawn(process.execPath, p.argv, {
      // The worker drains and exits if this process dies without stopping it (no orphans).
      env: { ...process.env, ...p.env, ...(this.opts.env ?? {}), LP_EXIT_WITH_PARENT: String(process.pid) },
      stdio: ['ignore', log, log],
    });
    fs.closeSync(log);
    const startedAt = Date.now();
    p.child = child;
    p.container.startedAt = iso(startedAt);
    p.container.restartAt = undefined;
    child.once('exit', (code, signal) => this.exited(p, child, startedAt, code, signal));
  }

  /**
   * Pods share this host: the receiver's probe port (and the demo's broker override) go into its
   * file, and the paths it names under mounted volumes (TLS cert, key, client CA; Kafka CA) point
   * at the runner's local copies.
   */
  private localizeReceiverConfig(file: string, port: number, mounts: Array<[string, string]>): void {
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
    const brokers = this.opts.env?.LP_KAFKA_BROKERS;
    if (brokers) cfg.kafka.brokers = brokers.split(',');
    fs.writeFileSync(file, JSON.stringify(cfg, null, 2));
  }

  private exited(
    p: LocalPod,
    child: ChildProcess,
    startedAt: number,
    code: number | null,
    signal: NodeJS.Signals | null,
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
    p.container.restartAt = now + restartDelayMs(p.backoffSteps, this.backoff);
    p.backoffSteps++;
  }

  private restart(p: LocalPod): void {
    p.container.restartCount++;
    this.spawn(p);
  }

  private async writePodStatus(p: LocalPod): Promise<void> {
    if (p.deleting || !p.object) return;
    const status = podStatus(p.name, p.container, p.startTime, Date.now());
    // The back-off countdown in the waiting message changes every second; compare without it.
    const fingerprint = JSON.stringify(status).replace(/back-off \d+s/g, 'back-off');
    if (fingerprint === p.lastStatus) return;
    try {
      p.object = await this.core.replaceNamespacedPodStatus({
        name: p.name,
        namespace: p.namespace,
        body: { ...p.object, status } as unknown as V1Pod,
      });
      p.lastStatus = fingerprint;
    } catch {
      // A conflict or a busy apiserver: read it again and retry on the next tick.
      p.object = await this.core
        .readNamespacedPod({ name: p.name, namespace: p.namespace })
        .catch(() => p.object);
    }
  }

  /** Stops the pod's process (SIGTERM, SIGKILL after 30 s) and deletes its Pod object. */
  private async deletePod(p: LocalPod, apiTimeoutMs = 10_000): Promise<void> {
    p.deleting = true;
    p.container.restartAt = undefined;
    if (p.child) await killProcess(p.child);
    const del = this.core
      .deleteNamespacedPod({ name: p.name, namespace: p.namespace, gracePeriodSeconds: 0 })
      .catch(() => undefined);
    await Promise.race([del, new Promise((r) => setTimeout(r, apiTimeoutMs).unref())]);
  }

  private async writeStatus(d: V1Deployment, pods: LocalPod[]): Promise<void> {
    const ready = pods.filter((p) => p.container.ready).length;
    const status = {
      observedGeneration: d.metadata?.generation,
      replicas: pods.length,
      updatedReplicas: pods.length,
      readyReplicas: ready,
      availableReplicas: ready,
      unavailableReplicas: pods.length - ready,
    };
    const current = d.status ?? {};
    const same = Object.entries(status).every(
      ([k, v]) =>
        (current as Record<string, unknown>)[k] === v ||
        (v === 0 && (current as Record<string, unknown>)[k] === undefined),
    );
    if (same) return;
    await this.apps.replaceNamespacedDeploymentStatus({
      name: d.metadata!.name!,
      namespace: d.metadata!.namespace!,
      body: { ...d, status: { ...current, ...status } },
    });
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

async function probe(p: LocalPod): Promise<void> {
  if (!isRunning(p.child)) {
    p.container.ready = false;
    return;
  }
  try {
    const res = await fetch(`http://127.0.0.1:${p.port}/readyz`, { signal: AbortSignal.timeout(1000) });
    p.container.ready = res.ok && isRunning(p.child);
  } catch {
    p.container.ready = false;
  }
}

async function killProcess(child: ChildProcess): Promise<void> {
  if (!isRunning(child)) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}
