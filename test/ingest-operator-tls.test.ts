/**
 * spec.ingest.syslog with TLS through the operator (issue 16 "done when"): the cert Secret, the
 * client CA Secret and a LogPipeline with UDP, TCP and TLS listeners (client certificates
 * required), a LoadBalancer Service with annotations and source ranges, and CPU autoscaling are
 * applied with kubectl. What the operator renders is read back from the real API server (Service
 * type, annotations, loadBalancerSourceRanges, externalTrafficPolicy, HPA target and bounds); the
 * bed has no load balancer implementation, so IngestReady stays False (LoadBalancerPending) until
 * the test writes the Service's load balancer address as one would. The local pod runner starts the
 * receiver from the Deployment with the Secrets as files; rsyslogd (omfwd UDP, TCP, TLS with gnutls
 * and a client certificate) and logger send to the endpoints status.ingest publishes; every line
 * lands in ClickHouse exactly once with sender_ip. A client certificate of another CA is refused,
 * counted, and the receiver says why. A topic whose max.message.bytes (set outside the spec) is
 * below packing.maxBytes turns IngestReady False naming both numbers, with an Event.
 */
import { AutoscalingV2Api } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { ConfigResourceTypes } from 'kafkajs';
import fs from 'node:fs';
import path from 'node:path';
import type { Manager } from '../operator/src/controller/manager';
import { registerExternalParts, type ExternalClients } from '../operator/src/controller/parts';
import { kstatus } from './env/kstatus';
import { PodRunner } from './env/pod-runner';
import { freePort, requireTool } from './env/process';
import { makeTestCerts, startRsyslog, type RsyslogForward, type TestCerts } from './env/rsyslog';
import { bedScratchDir, readTestBed } from './env/testbed';
import {
  apis,
  condition,
  createNamespace,
  createSecret,
  getPipeline,
  kubeConfig,
  mergePatch,
  patchPipelineSpec,
  startManager,
  waitFor,
} from './operator-harness';
import { kubectlAs, tearDownIngestTest, waitRowsStored } from './ingest-operator-support';
import { kafkaClient, metricSum, workerGet } from './worker-support';

jest.setTimeout(420_000);

const bed = readTestBed();
const dir = bedScratchDir('ingest-tls-');
const database = `ingtls_${process.pid}`;
const LB_ANNOTATION = 'metallb.universe.tf/address-pool';
let ns: string;
let ports: { udp: number; tcp: number; tls: number };
let certs: TestCerts;
let manager: Manager;
let external: ExternalClients;
let runner: PodRunner;
const stops: Array<() => Promise<unknown>> = [];

const fortigate = (tag: string, i: number) =>
  `date=2026-12-03 time=10:00:00 devname="FGT-01" srcip=10.0.${i % 250}.1 dstip=192.0.2.1 srcport=4000 dstport=443 proto=6 action="accept" case=${tag} seq=${i}`;

const b64 = (file: string) => fs.readFileSync(file).toString('base64');

/** What a user applies: the two Secrets and the pipeline, one kubectl apply. */
function manifest(): string {
  const secret = (name: string, type: string, data: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: ns },
    type,
    data,
  });
  const pipeline = {
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
            { name: 'udp', protocol: 'UDP', port: ports.udp },
            { name: 'tcp', protocol: 'TCP', port: ports.tcp },
            { name: 'tls', protocol: 'TLS', port: ports.tls },
          ],
          tls: {
            secretRef: { name: 'syslog-tls' },
            clientAuth: 'Required',
            clientCASecretRef: { name: 'firewall-ca', key: 'ca.crt' },
          },
          service: {
            type: 'LoadBalancer',
            annotations: { [LB_ANNOTATION]: 'firewalls' },
            externalTrafficPolicy: 'Local',
          },
          allowedSourceCIDRs: ['127.0.0.0/8', '10.0.0.0/8'],
          // One receiver: the pod runner's pods share this host's ports (no HPA controller runs here).
          autoscaling: { enabled: true, minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 60 },
          packing: { linger: '50ms' },
        },
      },
      deletionPolicy: 'Delete',
    },
  };
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'List',
    items: [
      secret('syslog-tls', 'kubernetes.io/tls', {
        'tls.crt': b64(certs.serverCert),
        'tls.key': b64(certs.serverKey),
      }),
      secret('firewall-ca', 'Opaque', { 'ca.crt': b64(certs.ca) }),
      pipeline,
    ],
  });
}

const kubectl = (args: string[], input?: string) => kubectlAs(bed, args, input);
const waitStored = (want: Record<string, number>) => waitRowsStored(bed, `${database}.fw`, want);

/** host:port of the listener `scheme` from status.ingest.endpoints (what a firewall admin copies). */
async function endpoint(scheme: 'udp' | 'tcp' | 'tls'): Promise<{ host: string; port: number }> {
  const lp = await getPipeline(ns, 'fw');
  const url = lp!.status!.ingest!.endpoints?.find((e) => e.startsWith(`${scheme}://`));
  if (!url) throw new Error(`no ${scheme} endpoint in ${JSON.stringify(lp!.status!.ingest)}`);
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
}

async function rsyslog(tag: string, forward: RsyslogForward, lines: string[]) {
  const rs = await startRsyslog(path.join(dir, tag), forward);
  stops.push(rs.stop);
  rs.append(lines);
  return rs;
}

beforeAll(async () => {
  requireTool('kubectl', 'the test applies the manifest as a user would');
  requireTool('logger', 'util-linux logger is a syslog sender');
  ns = await createNamespace('ingtls');
  await createSecret(ns, 'ch', { username: bed.clickhouse!.username, password: bed.clickhouse!.password });
  certs = makeTestCerts(path.join(dir, 'pki'));
  ports = { udp: await freePort(), tcp: await freePort(), tls: await freePort() };
  manager = startManager(ns);
  external = registerExternalParts(manager);
  runner = new PodRunner({
    kubeconfig: bed.kubernetes!.kubeconfig,
    dir: path.join(dir, 'pods'),
    intervalMs: 500,
  });
  runner.start();
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await tearDownIngestTest({ bed, ns, database, runner, manager, external });
});

it('kubectl apply: the operator renders the LoadBalancer Service and the HPA; no address yet is said', async () => {
  kubectl(['apply', '-f', '-'], manifest());
  const pending = await waitFor(
    'receiver ready, IngestReady=False LoadBalancerPending',
    async () => {
      const p = await getPipeline(ns, 'fw');
      return condition(p, 'IngestReady')?.reason === 'LoadBalancerPending' && p;
    },
    300_000,
  ).catch(async (err) => {
    const p = await getPipeline(ns, 'fw');
    throw new Error(`${(err as Error).message}; conditions: ${JSON.stringify(p?.status?.conditions)}`);
  });
  expect(condition(pending, 'IngestReady')).toMatchObject({
    status: 'False',
    message: expect.stringContaining('has no load balancer address yet'),
  });
  expect(pending.status!.ingest?.endpoints ?? []).toEqual([]);
  const { core } = apis();
  const svc = await core.readNamespacedService({ namespace: ns, name: 'fw-ingest' });
  expect(svc.metadata!.annotations).toMatchObject({ [LB_ANNOTATION]: 'firewalls' });
  expect(svc.spec).toMatchObject({
    type: 'LoadBalancer',
    externalTrafficPolicy: 'Local',
    loadBalancerSourceRanges: ['127.0.0.0/8', '10.0.0.0/8'],
  });
  // Local keeps the client address: the API server gives the Service a health-check node port.
  expect(svc.spec!.healthCheckNodePort).toBeGreaterThan(0);
  expect(svc.spec!.ports!.map((p) => [p.name, p.protocol, p.port, p.targetPort])).toEqual([
    ['udp', 'UDP', ports.udp, ports.udp],
    ['tcp', 'TCP', ports.tcp, ports.tcp],
    ['tls', 'TCP', ports.tls, ports.tls],
  ]);
  for (const p of svc.spec!.ports!) expect(p.nodePort).toBeGreaterThan(0);
  const hpa = await kubeConfig()
    .makeApiClient(AutoscalingV2Api)
    .readNamespacedHorizontalPodAutoscaler({ namespace: ns, name: 'fw-ingest' });
  expect(hpa.metadata!.ownerReferences?.[0]).toMatchObject({
    kind: 'LogPipeline',
    uid: pending.metadata.uid,
  });
  expect(hpa.spec).toMatchObject({
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'fw-ingest' },
    minReplicas: 1,
    maxReplicas: 3,
    metrics: [
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } },
      },
    ],
  });
  // The HPA owns the replica count: the operator leaves spec.replicas to it (the API server's default, 1, here).
  const dep = await apis().apps.readNamespacedDeployment({ namespace: ns, name: 'fw-ingest' });
  expect(dep.spec!.replicas).toBe(1);
  const volumes = dep.spec!.template.spec!.volumes!.find((v) => v.name === 'tls');
  expect(volumes?.projected?.sources?.map((s) => s.secret?.name)).toEqual(['syslog-tls', 'firewall-ca']);
});

it('with the load balancer address written, IngestReady and Ready are True, endpoints shown, kstatus Current', async () => {
  // What a load balancer implementation (cloud controller, MetalLB) does; the pods share this host.
  await apis().core.patchNamespacedServiceStatus(
    {
      namespace: ns,
      name: 'fw-ingest',
      body: { status: { loadBalancer: { ingress: [{ ip: '127.0.0.1' }] } } },
    },
    mergePatch,
  );
  const lp = await waitFor(
    'IngestReady=True and Ready=True',
    async () => {
      const p = await getPipeline(ns, 'fw');
      return condition(p, 'IngestReady')?.status === 'True' && condition(p, 'Ready')?.status === 'True' && p;
    },
    120_000,
  );
  const endpoints = [
    `udp://127.0.0.1:${ports.udp}`,
    `tcp://127.0.0.1:${ports.tcp}`,
    `tls://127.0.0.1:${ports.tls}`,
  ];
  expect(lp.status!.ingest!.endpoints).toEqual(endpoints);
  expect(condition(lp, 'IngestReady')!.message).toContain(endpoints.join(', '));
  expect(condition(lp, 'Stalled')?.status).toBe('False');
  expect(kstatus(lp).status).toBe('Current');
  expect(kubectl(['get', 'lp', 'fw', '-n', ns])).toContain(endpoints[0]);
});

it('rsyslog over UDP, TCP and TLS (client cert) and logger over UDP and TCP: every line once, with sender_ip', async () => {
  const N = 200;
  const M = 20;
  const udp = await endpoint('udp');
  const tcp = await endpoint('tcp');
  const tlsEp = await endpoint('tls');
  const seq = (tag: string, n: number) => Array.from({ length: n }, (_, i) => fortigate(tag, i));
  await rsyslog('rs-udp', { port: udp.port, protocol: 'udp' }, seq('rs-udp', N));
  await rsyslog('rs-tcp', { port: tcp.port, protocol: 'tcp', framing: 'octet-counted' }, seq('rs-tcp', N));
  await rsyslog(
    'rs-tls',
    { port: tlsEp.port, protocol: 'tcp', framing: 'octet-counted', tls: { mode: 'x509/name', certs } },
    seq('rs-tls', N),
  );
  const logger = (flags: string[], lines: string[]) =>
    execFileSync(
      'logger',
      ['-n', tcp.host, '-P', String(flags.includes('--udp') ? udp.port : tcp.port), ...flags, '-t', 'fwtest'],
      {
        input: lines.join('\n') + '\n',
      },
    );
  logger(['--tcp', '--octet-count', '--rfc5424'], seq('lg-tcp', M));
  // A datagram per line, paced: UDP has no retransmission, the socket buffer is the only queue.
  for (let i = 0; i < M; i += 5)
    logger(
      ['--udp', '--rfc3164'],
      Array.from({ length: 5 }, (_, k) => fortigate('lg-udp', i + k)),
    );
  const want = { 'rs-udp': N, 'rs-tcp': N, 'rs-tls': N, 'lg-tcp': M, 'lg-udp': M };
  const stored = await waitStored(want);
  for (const [c, n] of Object.entries(want))
    expect({ c, ...stored[c] }).toEqual({ c, rows: n, distinct: n, local: n });
});

it('a client certificate of another CA is refused over TLS, counted, and the receiver says why', async () => {
  const rogue = makeTestCerts(path.join(dir, 'rogue-pki'), 'fw-rogue');
  // Trusts the receiver (the real CA) but presents a certificate the receiver's CA never signed.
  const mixed: TestCerts = { ...certs, clientCert: rogue.clientCert, clientKey: rogue.clientKey };
  const tlsEp = await endpoint('tls');
  const [pod] = runner.podsOf(ns, 'fw-ingest');
  const failures = async () =>
    metricSum(
      (await workerGet(pod.port, '/metrics')).body,
      'logpipeline_ingest_tls_handshake_failures_total',
    );
  const before = await failures();
  await rsyslog(
    'rogue',
    { port: tlsEp.port, protocol: 'tcp', framing: 'octet-counted', tls: { mode: 'x509/name', certs: mixed } },
    Array.from({ length: 10 }, (_, i) => fortigate('rogue', i)),
  );
  // TLS 1.3: rsyslog's handshake completes before the receiver checks its certificate, so it may
  // take its first lines as sent; the receiver read none of them.
  await waitFor('a refused handshake counted', async () => (await failures()) > before, 120_000);
  const log = await waitFor(
    'the refusal reason in the receiver log',
    async () => {
      const text = fs.readFileSync(pod.logFile, 'utf8');
      return text.includes('tls client refused') && text;
    },
    60_000,
  );
  expect(log).toMatch(/"listener":"tls".*"reason":"client certificate not trusted: [A-Z_]+"/);
  // A barrier: a line sent over TLS with the trusted certificate after the rogue ones lands; the rogue ones never do.
  await rsyslog(
    'after-rogue',
    { port: tlsEp.port, protocol: 'tcp', framing: 'octet-counted', tls: { mode: 'x509/name', certs } },
    [fortigate('after-rogue', 0)],
  );
  const stored = await waitStored({ 'after-rogue': 1 });
  expect(stored.rogue).toBeUndefined();
});

it('packing.maxBytes above the topic max.message.bytes set outside the spec: IngestReady False naming both, an Event', async () => {
  // An admin lowers the topic's limit behind the operator's back (a config the spec does not manage).
  const admin = kafkaClient(bed, 'ingtls-admin').admin();
  await admin.connect();
  try {
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: `${ns}.fw`,
          configEntries: [
            { name: 'compression.type', value: 'lz4' },
            { name: 'max.message.bytes', value: '500000' },
          ],
        },
      ],
    });
  } finally {
    await admin.disconnect();
  }
  // Any spec change re-checks the topic; the default packing.maxBytes (1 MiB) no longer fits.
  await patchPipelineSpec(ns, 'fw', { ingest: { syslog: { packing: { linger: '60ms' } } } });
  const want = 'spec.ingest.syslog.packing.maxBytes (1048576) exceeds max.message.bytes (500000)';
  const lp = await waitFor(
    'IngestReady=False PackingExceedsTopicLimit',
    async () => {
      const p = await getPipeline(ns, 'fw');
      return condition(p, 'IngestReady')?.reason === 'PackingExceedsTopicLimit' && p;
    },
    120_000,
  );
  expect(condition(lp, 'IngestReady')).toMatchObject({
    status: 'False',
    message: expect.stringContaining(want),
  });
  expect(lp.status!.topic!.maxMessageBytes).toBe(500_000);
  expect(condition(lp, 'Ready')?.status).toBe('False');
  expect(condition(lp, 'Stalled')?.status).toBe('True');
  await waitFor(
    'a PackingExceedsTopicLimit Event',
    async () =>
      (await apis().core.listNamespacedEvent({ namespace: ns })).items.find(
        (e) => e.reason === 'PackingExceedsTopicLimit' && e.message?.includes(want),
      ),
    60_000,
  );
  // Lowering packing.maxBytes below the limit ends it.
  await patchPipelineSpec(ns, 'fw', { ingest: { syslog: { packing: { maxBytes: 400_000 } } } });
  await waitFor(
    'IngestReady=True again',
    async () => condition(await getPipeline(ns, 'fw'), 'IngestReady')?.status === 'True',
    120_000,
  );
});

it('switched to NodePort: source ranges dropped, endpoints name the node ports, printer column shows them', async () => {
  await patchPipelineSpec(ns, 'fw', {
    ingest: { syslog: { service: { type: 'NodePort', annotations: null } } },
  });
  const { core } = apis();
  const svc = await waitFor(
    'a NodePort Service',
    async () => {
      const s = await core.readNamespacedService({ namespace: ns, name: 'fw-ingest' });
      return s.spec?.type === 'NodePort' && s;
    },
    60_000,
  );
  expect(svc.spec!.loadBalancerSourceRanges ?? []).toEqual([]);
  expect(svc.spec!.externalTrafficPolicy).toBe('Local');
  expect(svc.metadata!.annotations?.[LB_ANNOTATION]).toBeUndefined();
  const nodePorts = svc.spec!.ports!.map((p) => `${p.name}://<node>:${p.nodePort}`);
  const lp = await waitFor(
    'endpoints on node ports',
    async () => {
      const p = await getPipeline(ns, 'fw');
      return JSON.stringify(p?.status?.ingest?.endpoints) === JSON.stringify(nodePorts) && p;
    },
    60_000,
  );
  expect(condition(lp, 'IngestReady')?.status).toBe('True');
  expect(kubectl(['get', 'lp', 'fw', '-n', ns])).toContain(nodePorts[0]);
});
