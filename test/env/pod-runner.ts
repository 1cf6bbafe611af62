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
 * conditions, with the readiness probe's failureThreshold; and it writes the Deployment's status as
 * the Deployment controller does (replica counts, `Available`, `Progressing`: deployment-rollout.ts).
 * A changed pod template of a worker Deployment is rolled out like RollingUpdate (maxSurge and
 * maxUnavailable, old pods removed only while enough stay ready); a receiver's pods are replaced at
 * once (their host ports). It is not a kubelet: no images (an image can be declared unpullable:
 * `refusePulls`), no liveness probes, no limits.
 *
 * One pod's process (argv, receiver config, probe, stop) is in test/env/pod-process.ts.
 */
import { AppsV1Api, CoreV1Api, KubeConfig, type V1Deployment, type V1Pod } from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  KUBELET_BACKOFF,
  noteReadiness,
  podStatus,
  unscheduledPodStatus,
  type BackoffSettings,
} from './pod-status';
import { renderPodFiles } from './pod-files';
import {
  isRunning,
  podObject,
  iso,
  killProcess,
  localArgv,
  localizeReceiverConfig,
  probe,
  recordExit,
  type LocalPod,
} from './pod-process';
import { freePort } from './process';
import { deploymentStatus, planRollingUpdate, rolloutBounds } from './deployment-rollout';

const SELECTOR = 'app.kubernetes.io/name in (logpipeline-worker,logpipeline-ingest)';
/** The node name the runner's pods are "scheduled" to. */
export const LOCAL_NODE = 'local-pod-runner';

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
  /**
   * Pods the bed's one node holds (default: no limit). A pod beyond it stays Pending, unscheduled
   * (PodScheduled False, Unschedulable), until a pod goes away or the limit is raised.
   */
  maxPods?: number;
  /**
   * Replace every pod of a changed template at once (as strategy Recreate would) instead of the
   * Deployment's RollingUpdate: for tests calibrated on old pods going away at once.
   */
  replaceAtOnce?: boolean;
}

/** Keeps local worker processes and their Pods in line with the worker Deployments; stop() ends them all. */
export class PodRunner {
  private readonly apps: AppsV1Api;
  private readonly core: CoreV1Api;
  private readonly pods = new Map<string, LocalPod[]>();
  /** The template hash each Deployment had at the last sync (a new one starts a rollout). */
  private readonly templates = new Map<string, string>();
  private readonly unpullable = new Set<string>();
  private readonly dir: string;
  private readonly backoff: BackoffSettings;
  private timer?: NodeJS.Timeout;
  private running = false;
  private syncing = false;
  private maxPods?: number;

  constructor(private readonly opts: PodRunnerOptions) {
    const kc = new KubeConfig();
    kc.loadFromFile(opts.kubeconfig);
    this.apps = kc.makeApiClient(AppsV1Api);
    this.core = kc.makeApiClient(CoreV1Api);
    this.dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'logpipeline-pods-'));
    this.backoff = { ...KUBELET_BACKOFF, ...opts.crashBackoff };
    this.maxPods = opts.maxPods;
  }

  /** Sets how many pods the node holds (undefined: no limit); pods waiting for room are placed by the next sync. */
  setMaxPods(max: number | undefined): void {
    this.maxPods = max;
  }

  /** Makes `image` one the kubelet cannot pull: new containers of it wait in ImagePullBackOff, never started. */
  refusePulls(image: string): void {
    this.unpullable.add(image);
  }

  private hasRoom(): boolean {
    if (this.maxPods === undefined) return true;
    let placed = 0;
    for (const pods of this.pods.values()) placed += pods.filter((p) => !p.unscheduled && !p.deleting).length;
    return placed < this.maxPods;
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
    const seen = this.templates.get(key);
    this.templates.set(key, hash);
    const pods =
      rollsGradually(d) && !this.opts.replaceAtOnce
        ? await this.rollStep(key, d, want, hash)
        : await this.replaceAtOnce(key, d, want, hash);
    for (const p of pods) if (p.unscheduled && this.hasRoom()) await this.bind(p);
    const now = Date.now();
    for (const p of pods) {
      if (!isRunning(p.child) && p.container.restartAt !== undefined && now >= p.container.restartAt)
        this.restart(p);
    }
    await Promise.all(pods.map((p) => probe(p)));
    await Promise.all(pods.map((p) => this.writePodStatus(p)));
    await this.writeStatus(d, pods, hash, seen !== undefined && seen !== hash);
  }

  /**
   * A changed template replaces every pod at once (the receivers: their listener ports are bound on
   * this shared host, so an old and a new receiver cannot run side by side).
   */
  private async replaceAtOnce(key: string, d: V1Deployment, want: number, hash: string) {
    const pods = this.pods.get(key) ?? [];
    await Promise.all(pods.filter((p) => p.templateHash !== hash).map((p) => this.deletePod(p)));
    const current = await this.scaleDown(
      pods.filter((p) => p.templateHash === hash),
      want,
    );
    return this.create(key, d, hash, current, want - current.length);
  }

  /** One RollingUpdate step (deployment-rollout.ts): new pods within the surge, old ones while enough stay available. */
  private async rollStep(key: string, d: V1Deployment, want: number, hash: string) {
    const pods = this.pods.get(key) ?? [];
    const view = (p: LocalPod) => ({ pod: p, ready: p.container.ready });
    const old = pods.filter((p) => p.templateHash !== hash).map(view);
    const current = pods.filter((p) => p.templateHash === hash);
    const plan = planRollingUpdate(want, rolloutBounds(d.spec?.strategy, want), current.map(view), old);
    await Promise.all(plan.remove.map((v) => this.deletePod(v.pod)));
    const kept = old.filter((v) => !plan.remove.includes(v)).map((v) => v.pod);
    return this.create(key, d, hash, [...kept, ...(await this.scaleDown(current, want))], plan.create);
  }

  /** Like the ReplicaSet controller: scales down to `want`, the pods that are not ready first. */
  private async scaleDown(pods: LocalPod[], want: number): Promise<LocalPod[]> {
    pods.sort((a, b) => Number(b.container.ready) - Number(a.container.ready));
    while (pods.length > want) await this.deletePod(pods.pop()!);
    return pods;
  }

  /** Keeps `pods` as the Deployment's and adds `count` new pods of the current template. */
  private async create(key: string, d: V1Deployment, hash: string, pods: LocalPod[], count: number) {
    // Registered before the creates: the room check counts the pods placed so far.
    this.pods.set(key, pods);
    for (let n = 0; n < count; n++) pods.push(await this.createPod(d, hash));
    return pods;
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
    const placed = this.hasRoom();
    const object = await this.core.createNamespacedPod({
      namespace: ns,
      body: podObject(d, name, placed ? LOCAL_NODE : undefined),
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
      readinessProbe: container.readinessProbe,
      backoffSteps: 0,
      startTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      deleting: false,
      object,
    };
    pod.port = await freePort();
    if (placed) this.spawn(pod);
    else pod.unscheduled = true;
    return pod;
  }

  /** Places a pod that waited for room on the node (the scheduler's binding) and starts it. */
  private async bind(p: LocalPod): Promise<void> {
    const target = { apiVersion: 'v1', kind: 'Node', name: LOCAL_NODE };
    const body = { apiVersion: 'v1', kind: 'Binding', metadata: { name: p.name }, target };
    await this.core.createNamespacedPodBinding({ name: p.name, namespace: p.namespace, body });
    p.object = await this.core.readNamespacedPod({ name: p.name, namespace: p.namespace });
    p.unscheduled = false;
    p.startTime = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    this.spawn(p);
  }

  /** Starts the pod's process (a fresh termination-message file each time, like a new container). */
  private spawn(p: LocalPod): void {
    // The kubelet cannot pull the image: the container waits, never started (test/env/pod-status.ts).
    if (this.unpullable.has(p.container.image)) {
      p.container.pullBackOff = `Back-off pulling image "${p.container.image}"`;
      return;
    }
    fs.writeFileSync(p.messageFile, '');
    p.env.LP_HTTP_PORT = String(p.port);
    if (p.receiverConfig)
      localizeReceiverConfig(p.receiverConfig, p.port, p.mounts, this.opts.env?.LP_KAFKA_BROKERS);
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
    child.once('exit', (code, signal) => recordExit(p, child, startedAt, code, signal, this.backoff));
  }

  private restart(p: LocalPod): void {
    p.container.restartCount++;
    this.spawn(p);
  }

  private async writePodStatus(p: LocalPod): Promise<void> {
    if (p.deleting || !p.object) return;
    const now = Date.now();
    noteReadiness(p.container, now);
    const status = p.unscheduled
      ? unscheduledPodStatus(p.startTime)
      : podStatus(p.name, p.container, p.startTime, now);
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

  private async writeStatus(d: V1Deployment, pods: LocalPod[], hash: string, newTemplate: boolean) {
    const view = (mine: boolean) =>
      pods.filter((p) => (p.templateHash === hash) === mine).map((p) => ({ ready: p.container.ready }));
    const status = deploymentStatus(d, hash, newTemplate, view(true), view(false), Date.now());
    if (!status) return;
    await this.apps.replaceNamespacedDeploymentStatus({
      name: d.metadata!.name!,
      namespace: d.metadata!.namespace!,
      body: { ...d, status } as V1Deployment,
    });
  }
}

/** True for a worker Deployment with the RollingUpdate strategy (receivers are replaced at once: see replaceAtOnce). */
function rollsGradually(d: V1Deployment): boolean {
  const worker = d.metadata?.labels?.['app.kubernetes.io/name'] === 'logpipeline-worker';
  return worker && d.spec?.strategy?.type !== 'Recreate';
}
