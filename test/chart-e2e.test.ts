/**
 * The chart end to end on the real apiserver: the rendered release (ServiceAccount, RBAC, the
 * operator Deployment's configuration) is applied, then the real operator process runs with the
 * chart ServiceAccount's token — not the admin — and the env of the rendered Deployment, and
 * reconciles a LogPipeline into a Kafka topic, ClickHouse tables and worker children, and deletes
 * it again. Any RBAC verb the chart lacks makes a step fail (and shows as `forbidden` in the log).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  applyRendered,
  deleteRendered,
  ensureNamespace,
  renderRelease,
  serviceAccountKubeconfig,
  type RenderedObject,
} from './env/chart';
import { freePort } from './env/process';
import { readTestBed } from './env/testbed';
import {
  apis,
  condition,
  createPipeline,
  createSecret,
  deleteNamespace,
  deletePipeline,
  getPipeline,
  maybe,
  pipeline,
  setDeploymentStatus,
  waitFor,
} from './operator-harness';

const bed = readTestBed();
const k8s = bed.kubernetes!;
const OPERATOR_MAIN = path.resolve(__dirname, '../dist/operator/src/main.js');

interface EnvVar {
  name: string;
  value?: string;
}

let release: { ns: string; objects: RenderedObject[] };
let appNs: string;
let operator: ChildProcess;
let logFile: string;

function operatorEnv(objects: RenderedObject[], kubeconfig: string, port: number): Record<string, string> {
  const dep = objects.find((o) => o.kind === 'Deployment') as unknown as {
    spec: { template: { spec: { containers: Array<{ env: EnvVar[] }> } } };
  };
  const env: Record<string, string> = {};
  for (const e of dep.spec.template.spec.containers[0].env) if (e.value !== undefined) env[e.name] = e.value;
  return {
    ...env,
    KUBECONFIG: kubeconfig,
    METRICS_PORT: String(port),
    POD_NAME: 'chart-e2e-operator',
    POD_NAMESPACE: release.ns,
  };
}

beforeAll(async () => {
  const id = randomBytes(3).toString('hex');
  release = { ns: `lp-e2e-${id}`, objects: [] };
  await ensureNamespace(k8s, release.ns);
  release.objects = renderRelease({}, `e2e-${id}`, release.ns);
  await applyRendered(k8s, release.objects);
  const sa = release.objects.find((o) => o.kind === 'ServiceAccount')!.metadata.name;
  const kubeconfig = await serviceAccountKubeconfig(k8s, release.ns, sa);
  const port = await freePort();
  logFile = path.join(bed.dir, `chart-e2e-operator-${id}.log`);
  const log = fs.openSync(logFile, 'a');
  operator = spawn(process.execPath, [OPERATOR_MAIN], {
    env: { ...process.env, ...operatorEnv(release.objects, kubeconfig, port) },
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  await waitFor('operator ready', async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, 60_000);
  appNs = `lp-e2e-app-${id}`;
  await ensureNamespace(k8s, appNs);
  await createSecret(appNs, 'ch', { username: bed.clickhouse!.username, password: bed.clickhouse!.password });
});

afterAll(async () => {
  if (operator && operator.exitCode === null) {
    const exited = new Promise((r) => operator.once('exit', r));
    operator.kill('SIGTERM');
    await exited;
  }
  if (appNs) await deleteNamespace(appNs);
  if (release) await deleteRendered(k8s, release.objects);
  if (logFile && fs.existsSync(logFile)) {
    const forbidden = fs
      .readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((l) => /forbidden/i.test(l));
    expect(forbidden).toEqual([]);
  }
});

it('reconciles a LogPipeline end to end with only the chart ServiceAccount permissions', async () => {
  await createPipeline({
    ...pipeline(appNs, 'fw'),
    spec: {
      kafka: { bootstrapServers: [bed.kafka!.bootstrap], topic: { name: `${appNs}.fw`, partitions: 2 } },
      clickhouse: {
        url: bed.clickhouse!.url,
        credentialsSecretRef: { name: 'ch' },
        database: 'chart_e2e',
        table: 'fw',
      },
      workers: { replicas: 1 },
      deletionPolicy: 'Delete',
    } as never,
  });
  const parts = await waitFor(
    'topic and table ready',
    async () => {
      const p = await getPipeline(appNs, 'fw');
      return condition(p, 'TopicReady')?.status === 'True' && condition(p, 'TableReady')?.status === 'True'
        ? p
        : undefined;
    },
    90_000,
  );
  expect(parts.metadata.finalizers).toContain('logpipeline.io/external-resources');
  const { apps, core } = apis();
  const dep = await waitFor(
    'worker Deployment',
    () => maybe(apps.readNamespacedDeployment({ namespace: appNs, name: 'fw-worker' })),
    30_000,
  );
  expect(dep.metadata?.ownerReferences?.[0]?.kind).toBe('LogPipeline');
  expect(
    await maybe(core.readNamespacedConfigMap({ namespace: appNs, name: 'fw-worker-config' })),
  ).toBeDefined();
  // No kubelet: report the single replica ready as the Deployment controller would.
  await setDeploymentStatus(appNs, 'fw-worker', {
    observedGeneration: dep.metadata?.generation,
    replicas: 1,
    updatedReplicas: 1,
    readyReplicas: 1,
    availableReplicas: 1,
  });
  const ready = await waitFor(
    'Ready',
    async () => {
      const p = await getPipeline(appNs, 'fw');
      return condition(p, 'Ready')?.status === 'True' ? p : undefined;
    },
    60_000,
  );
  expect(ready.status?.observedGeneration).toBe(ready.metadata.generation);

  await deletePipeline(appNs, 'fw');
  await waitFor(
    'finalizer released and pipeline gone',
    async () => (await getPipeline(appNs, 'fw')) === undefined,
    60_000,
  );
}, 240_000);
