/**
 * spec.ingest.syslog end to end on the real bed (issue 16): a LogPipeline with a TCP and a UDP
 * listener is applied with kubectl; the operator creates the receiver's ConfigMap, Deployment,
 * Service and PDB (owner references to the pipeline), the local pod runner runs the receiver from
 * the Deployment's `command` and the worker from its image entrypoint, IngestReady turns True with
 * the Service's endpoints in status. util-linux logger sends over TCP and UDP to the receiver, and
 * every line lands in ClickHouse exactly once with sender_ip. Removing spec.ingest deletes the
 * receiver's objects and its condition.
 */
import { execFileSync } from 'node:child_process';
import type { Manager } from '../operator/src/controller/manager';
import { registerExternalParts, type ExternalClients } from '../operator/src/controller/parts';
import { kstatus } from './env/kstatus';
import { freePort, requireTool } from './env/process';
import { PodRunner } from './env/pod-runner';
import { bedScratchDir, readTestBed } from './env/testbed';
import {
  apis,
  condition,
  createNamespace,
  createSecret,
  getPipeline,
  patchPipelineSpec,
  startManager,
  waitFor,
} from './operator-harness';
import { storedRowsByCase, tearDownIngestTest } from './ingest-operator-support';

jest.setTimeout(300_000);

const bed = readTestBed();
const podDir = bedScratchDir('ingest-op-');
const database = `ingop_${process.pid}`;
let ns: string;
let port: number;
let manager: Manager;
let external: ExternalClients;
let runner: PodRunner;

const fortigate = (tag: string, i: number) =>
  `date=2026-12-03 time=10:00:00 devname="FGT-01" srcip=10.0.${i % 250}.1 dstip=192.0.2.1 srcport=4000 dstport=443 proto=6 action="accept" case=${tag} seq=${i}`;

function manifest(): string {
  return JSON.stringify({
    apiVersion: 'logpipeline.io/v1alpha1',
    kind: 'LogPipeline',
    metadata: { name: 'fw', namespace: ns },
    spec: {
      kafka: { bootstrapServers: [bed.kafka!.bootstrap], topic: { name: `${ns}.fw`, partitions: 2 } },
      clickhouse: { url: bed.clickhouse!.url, credentialsSecretRef: { name: 'ch' }, database, table: 'fw' },
      workers: { replicas: 1, batch: { maxDelay: '300ms' } },
      ingest: {
        syslog: {
          listeners: [
            { name: 'tcp', protocol: 'TCP', port },
            { name: 'udp', protocol: 'UDP', port },
          ],
          // One receiver: the pod runner's pods share this host's ports.
          replicas: 1,
          packing: { linger: '50ms' },
        },
      },
      deletionPolicy: 'Delete',
    },
  });
}

function kubectl(args: string[], input?: string): string {
  return execFileSync('kubectl', ['--kubeconfig', bed.kubernetes!.kubeconfig, ...args], {
    input,
    encoding: 'utf8',
  });
}

/** Sends each line as one message with logger (stdin: one TCP connection, one datagram per line). */
function logger(transport: '--tcp' | '--udp', lines: string[]): void {
  execFileSync('logger', ['-n', '127.0.0.1', '-P', String(port), transport, '--rfc3164', '-t', 'fwtest'], {
    input: lines.join('\n') + '\n',
  });
}

const storedByCase = () => storedRowsByCase(bed, `${database}.fw`);

beforeAll(async () => {
  requireTool('kubectl', 'the test applies the manifest as a user would');
  requireTool('logger', 'util-linux logger is the syslog sender');
  ns = await createNamespace('ingest');
  await createSecret(ns, 'ch', { username: bed.clickhouse!.username, password: bed.clickhouse!.password });
  port = await freePort();
  manager = startManager(ns);
  external = registerExternalParts(manager);
  runner = new PodRunner({ kubeconfig: bed.kubernetes!.kubeconfig, dir: podDir, intervalMs: 500 });
  runner.start();
});

afterAll(async () => {
  await tearDownIngestTest({ bed, ns, database, runner, manager, external });
});

it('kubectl apply brings up the receiver: objects owned by the pipeline, IngestReady with endpoints', async () => {
  kubectl(['apply', '-f', '-'], manifest());
  const lp = await waitFor(
    'IngestReady=True and Ready=True',
    async () => {
      const p = await getPipeline(ns, 'fw');
      return condition(p, 'IngestReady')?.status === 'True' && condition(p, 'Ready')?.status === 'True' && p;
    },
    180_000,
  ).catch(async (err) => {
    const p = await getPipeline(ns, 'fw');
    throw new Error(`${(err as Error).message}; conditions: ${JSON.stringify(p?.status?.conditions)}`);
  });
  const { core, apps, policy } = apis();
  const uid = lp.metadata.uid;
  const dep = await apps.readNamespacedDeployment({ namespace: ns, name: 'fw-ingest' });
  const svc = await core.readNamespacedService({ namespace: ns, name: 'fw-ingest' });
  const pdb = await policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'fw-ingest' });
  for (const o of [dep, svc, pdb])
    expect(o.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'LogPipeline', uid });
  expect(dep.spec!.template.spec!.containers[0].command).toEqual([
    '/nodejs/bin/node',
    'dist/consumer/src/ingest/main.js',
  ]);
  expect(svc.spec!.ports!.map((p) => [p.name, p.protocol, p.port, p.targetPort])).toEqual([
    ['tcp', 'TCP', port, port],
    ['udp', 'UDP', port, port],
  ]);
  expect(lp.status!.ingest!.endpoints).toEqual([
    `tcp://${svc.spec!.clusterIP}:${port}`,
    `udp://${svc.spec!.clusterIP}:${port}`,
  ]);
  expect(condition(lp, 'Ready')?.status).toBe('True');
  // kstatus: a ready pipeline with a receiver is Current (not stalled, not reconciling).
  expect(condition(lp, 'Stalled')?.status).toBe('False');
  expect(condition(lp, 'Reconciling')?.status).toBe('False');
  expect(kstatus(lp).status).toBe('Current');
  expect(kubectl(['get', 'lp', 'fw', '-n', ns])).toContain(`tcp://${svc.spec!.clusterIP}:${port}`);
});

it('logger over TCP and UDP: every line in ClickHouse exactly once with sender_ip', async () => {
  const N = 50;
  const M = 20;
  logger(
    '--tcp',
    Array.from({ length: N }, (_, i) => fortigate('lg-tcp', i)),
  );
  // A datagram per line, paced: UDP has no retransmission, and the loopback buffer is the only queue.
  for (let i = 0; i < M; i += 5)
    logger(
      '--udp',
      Array.from({ length: 5 }, (_, k) => fortigate('lg-udp', i + k)),
    );
  const stored = await waitFor(
    'every line stored',
    async () => {
      const s = await storedByCase();
      return (s['lg-tcp']?.distinct ?? 0) >= N && (s['lg-udp']?.distinct ?? 0) >= M && s;
    },
    180_000,
  );
  expect(stored['lg-tcp']).toEqual({ rows: N, distinct: N, local: N });
  expect(stored['lg-udp']).toEqual({ rows: M, distinct: M, local: M });
});

it('removing spec.ingest deletes the receiver objects and the IngestReady condition', async () => {
  await patchPipelineSpec(ns, 'fw', { ingest: null });
  const { core, apps } = apis();
  await waitFor(
    'receiver objects deleted and condition gone',
    async () => {
      const p = await getPipeline(ns, 'fw');
      const deps = (await apps.listNamespacedDeployment({ namespace: ns })).items.map(
        (d) => d.metadata!.name,
      );
      const svcs = (await core.listNamespacedService({ namespace: ns })).items.map((s) => s.metadata!.name);
      return (
        !deps.includes('fw-ingest') &&
        deps.includes('fw-worker') &&
        !svcs.includes('fw-ingest') &&
        !condition(p, 'IngestReady') &&
        p?.status?.ingest === undefined
      );
    },
    60_000,
  );
});
