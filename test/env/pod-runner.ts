/**
 * THE LOCAL POD RUNNER — A STAND-IN FOR KUBELET IN TESTS AND THE DEMO ONLY.
 *
 * The test bed has no kubelet, so nothing would run the worker Deployments the operator creates.
 * This runner watches them (label app.kubernetes.io/name=logpipeline-worker) and keeps
 * `spec.replicas` local worker processes (`node dist/consumer/src/main.js`) running with the same
 * configuration as the pod template: the ConfigMap volume written to a temp dir, env values and
 * secretKeyRefs resolved from the apiserver. It writes the Deployment's status replica fields so
 * the operator sees what runs. A changed pod template (config-hash annotation) restarts the
 * processes, like a rollout. It is not a kubelet: no images, no probes beyond /readyz, no limits.
 */
import { AppsV1Api, CoreV1Api, KubeConfig, type V1Deployment, type V1EnvVar } from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './process';

const WORKER_MAIN = path.resolve(
  __dirname,
  fs.existsSync(path.join(__dirname, '../../dist')) ? '../../dist' : '../../../dist',
  'consumer/src/main.js',
);
const SELECTOR = 'app.kubernetes.io/name=logpipeline-worker';

interface LocalPod {
  child: ChildProcess;
  port: number;
  ready: boolean;
  templateHash: string;
  logFile: string;
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
}

/** Keeps local worker processes in line with the worker Deployments; stop() kills them all. */
export class PodRunner {
  private readonly apps: AppsV1Api;
  private readonly core: CoreV1Api;
  private readonly pods = new Map<string, LocalPod[]>();
  private readonly dir: string;
  private timer?: NodeJS.Timeout;
  private running = false;
  private syncing = false;

  constructor(private readonly opts: PodRunnerOptions) {
    const kc = new KubeConfig();
    kc.loadFromFile(opts.kubeconfig);
    this.apps = kc.makeApiClient(AppsV1Api);
    this.core = kc.makeApiClient(CoreV1Api);
    this.dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'logpipeline-pods-'));
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

  /** Number of local processes for a Deployment (for tests). */
  count(namespace: string, name: string): number {
    return this.pods.get(`${namespace}/${name}`)?.length ?? 0;
  }

  /** Stops the loop and every worker (SIGTERM, so they drain and commit). */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    while (this.syncing) await new Promise((r) => setTimeout(r, 50));
    await Promise.all([...this.pods.values()].flat().map((p) => killPod(p)));
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
          await Promise.all(pods.map((p) => killPod(p)));
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
    let pods = (this.pods.get(key) ?? []).filter(
      (p) => p.child.exitCode === null && p.child.signalCode === null,
    );
    const stale = pods.filter((p) => p.templateHash !== hash);
    if (stale.length > 0) {
      await Promise.all(stale.map((p) => killPod(p)));
      pods = pods.filter((p) => p.templateHash === hash);
    }
    while (pods.length > want) await killPod(pods.pop()!);
    while (pods.length < want) pods.push(await this.startPod(d, hash, pods.length));
    this.pods.set(key, pods);
    await Promise.all(pods.map((p) => probe(p)));
    await this.writeStatus(d, pods);
  }

  private async startPod(d: V1Deployment, hash: string, index: number): Promise<LocalPod> {
    const ns = d.metadata!.namespace!;
    const podDir = path.join(
      this.dir,
      `${ns}-${d.metadata!.name}-${hash.slice(0, 8)}-${index}-${Date.now()}`,
    );
    fs.mkdirSync(podDir, { recursive: true });
    const container = d.spec!.template.spec!.containers[0];
    const env: Record<string, string> = {};
    const mounts: Array<[string, string]> = [];
    for (const mount of container.volumeMounts ?? []) {
      const volume = d.spec!.template.spec!.volumes?.find((v) => v.name === mount.name);
      if (!volume?.configMap) continue;
      const cm = await this.core.readNamespacedConfigMap({ name: volume.configMap.name!, namespace: ns });
      const target = path.join(podDir, mount.mountPath);
      fs.mkdirSync(target, { recursive: true });
      for (const [file, content] of Object.entries(cm.data ?? {}))
        fs.writeFileSync(path.join(target, file), content);
      mounts.push([mount.mountPath, target]);
    }
    const podName = `${d.metadata!.name}-${hash.slice(0, 8)}-${index}`;
    for (const e of container.env ?? [])
      env[e.name] = localPath(await this.resolveEnv(ns, e, podName), mounts);
    const configFile = mounts.map(([, t]) => path.join(t, 'config.json')).find((f) => fs.existsSync(f));
    // The container sees its files under the mount paths; here they live in the pod's directory.
    if (configFile && (env.LP_CONFIG === undefined || !fs.existsSync(env.LP_CONFIG)))
      env.LP_CONFIG = configFile;
    const args = (container.args ?? []).map((a) => localPath(a, mounts));
    const port = await freePort();
    env.LP_HTTP_PORT = String(port);
    const logFile = path.join(podDir, 'worker.log');
    const log = fs.openSync(logFile, 'a');
    const child = spawn(process.execPath, [WORKER_MAIN, ...args], {
      // The worker drains and exits if this process dies without stopping it (no orphans).
      env: { ...process.env, ...env, ...(this.opts.env ?? {}), LP_EXIT_WITH_PARENT: String(process.pid) },
      stdio: ['ignore', log, log],
    });
    fs.closeSync(log);
    return { child, port, ready: false, templateHash: hash, logFile };
  }

  private async resolveEnv(ns: string, e: V1EnvVar, podName: string): Promise<string> {
    if (e.value !== undefined) return e.value;
    const field = e.valueFrom?.fieldRef?.fieldPath;
    if (field === 'metadata.name') return podName;
    if (field === 'metadata.namespace') return ns;
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) {
      const secret = await this.core.readNamespacedSecret({ name: ref.name!, namespace: ns });
      const b64 = secret.data?.[ref.key];
      return b64 ? Buffer.from(b64, 'base64').toString('utf8') : '';
    }
    return '';
  }

  private async writeStatus(d: V1Deployment, pods: LocalPod[]): Promise<void> {
    const ready = pods.filter((p) => p.ready).length;
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

/** Maps a path inside the container (under a mount path) to where the runner put the files. */
function localPath(value: string, mounts: ReadonlyArray<[string, string]>): string {
  for (const [mountPath, local] of mounts) {
    if (value === mountPath || value.startsWith(`${mountPath}/`))
      return local + value.slice(mountPath.length);
  }
  return value;
}

async function probe(p: LocalPod): Promise<void> {
  try {
    const res = await fetch(`http://127.0.0.1:${p.port}/readyz`, { signal: AbortSignal.timeout(1000) });
    p.ready = res.ok;
  } catch {
    p.ready = false;
  }
}

async function killPod(p: LocalPod): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.child.once('exit', () => r()));
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}
