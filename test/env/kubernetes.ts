/**
 * The Kubernetes part of the test bed: real etcd and kube-apiserver built from Go modules by
 * scripts/build-k8s.sh (cached outside the repo), plus kube-controller-manager with the garbage
 * collector and namespace controllers (controller-manager.ts). No kubelet: the pod runner stands in.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { startControllerManager } from './controller-manager';
import {
  cacheDir,
  freePort,
  requireTool,
  startProcess,
  stopProcess,
  waitUntil,
  type ServiceProcess,
} from './process';
import type { KubernetesBed } from './testbed';

const REPO = path.resolve(
  __dirname,
  fs.existsSync(path.join(__dirname, '../../crds')) ? '../..' : '../../..',
);
const K8S_VERSION = process.env.K8S_VERSION ?? 'v1.34.4';
const ETCD_VERSION = process.env.ETCD_VERSION ?? 'v3.6.16';

/** Paths of the cached binaries; builds them with scripts/build-k8s.sh when missing. */
function ensureBinaries(): { etcd: string; apiserver: string; controllerManager: string } {
  const bin = path.join(cacheDir(), 'bin');
  const etcd = path.join(bin, `etcd-${ETCD_VERSION}`);
  const apiserver = path.join(bin, `kube-apiserver-${K8S_VERSION}`);
  const controllerManager = path.join(bin, `kube-controller-manager-${K8S_VERSION}`);
  if (![etcd, apiserver, controllerManager].every((f) => fs.existsSync(f))) {
    requireTool('go', 'etcd and kube-apiserver are built from Go modules');
    execFileSync('bash', [path.join(REPO, 'scripts/build-k8s.sh')], {
      // Build progress to stderr: a caller's stdout may be a document (`npm run bench`'s JSON).
      stdio: ['ignore', 2, 2],
      env: { ...process.env, K8S_VERSION, ETCD_VERSION },
    });
  }
  return { etcd, apiserver, controllerManager };
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Issues a key + certificate signed by the bed's CA. */
function issueCert(dir: string, name: string, subject: string, ext?: string): void {
  openssl(
    [
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      subject,
    ],
    dir,
  );
  const args = [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '3650',
    '-out',
    `${name}.crt`,
  ];
  if (ext) {
    fs.writeFileSync(path.join(dir, `${name}.ext`), ext);
    args.push('-extfile', `${name}.ext`);
  }
  openssl(args, dir);
}

/** CA, serving cert, admin and non-admin client identities, service-account key pair. */
function generatePki(dir: string): void {
  requireTool('openssl', 'the test bed generates its own CA and certificates');
  fs.mkdirSync(dir, { recursive: true });
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '3650',
      '-subj',
      '/CN=logpipeline-testbed-ca',
    ],
    dir,
  );
  issueCert(
    dir,
    'apiserver',
    '/CN=kube-apiserver',
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n',
  );
  issueCert(dir, 'admin', '/O=system:masters/CN=testbed-admin', 'extendedKeyUsage=clientAuth\n');
  issueCert(dir, 'user', '/O=testbed-users/CN=testbed-user', 'extendedKeyUsage=clientAuth\n');
  openssl(['genrsa', '-out', 'sa.key', '2048'], dir);
  openssl(['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
}

function writeKubeconfig(file: string, server: string, pki: string, user: string): void {
  const yaml = `apiVersion: v1
kind: Config
clusters:
- name: testbed
  cluster:
    server: ${server}
    certificate-authority: ${path.join(pki, 'ca.crt')}
users:
- name: ${user}
  user:
    client-certificate: ${path.join(pki, `${user}.crt`)}
    client-key: ${path.join(pki, `${user}.key`)}
contexts:
- name: testbed
  context: { cluster: testbed, user: ${user}, namespace: default }
current-context: testbed
`;
  fs.writeFileSync(file, yaml);
}

/** Performs one HTTPS request to the apiserver as the admin; resolves with status and body. */
export function adminRequest(
  bed: Pick<KubernetesBed, 'server' | 'kubeconfig'>,
  method: string,
  urlPath: string,
  body?: unknown,
): Promise<{ status: number; body: string }> {
  const pki = path.join(path.dirname(bed.kubeconfig), 'pki');
  const url = new URL(urlPath, bed.server);
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method,
        ca: fs.readFileSync(path.join(pki, 'ca.crt')),
        cert: fs.readFileSync(path.join(pki, 'admin.crt')),
        key: fs.readFileSync(path.join(pki, 'admin.key')),
        headers: body ? { 'content-type': 'application/json' } : {},
        timeout: 10_000,
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    if (body) req.write(JSON.stringify(body));
    req.end();
  });
}

function etcdArgs(dir: string, clientPort: number, peerPort: number): string[] {
  return [
    '--name=testbed',
    `--data-dir=${path.join(dir, 'etcd-data')}`,
    `--listen-client-urls=http://127.0.0.1:${clientPort}`,
    `--advertise-client-urls=http://127.0.0.1:${clientPort}`,
    `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-cluster=testbed=http://127.0.0.1:${peerPort}`,
    // A test bed trades durability for speed: fsync dominates etcd latency on shared disks.
    '--unsafe-no-fsync',
    '--log-level=warn',
  ];
}

/**
 * Audit policy of the bed: every write (create/update/patch/delete) at Metadata level, reads and
 * leases not at all. Tests count the operator's writes from the apiserver's side with it
 * (test/fleet-steady.test.ts).
 */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    verbs: [get, list, watch]
  - level: None
    resources: [{ group: coordination.k8s.io, resources: [leases] }]
  - level: Metadata
`;

/** The bed apiserver's audit log (JSON lines, one per write request). */
export function auditLogPath(bed: Pick<KubernetesBed, 'kubeconfig'>): string {
  return path.join(path.dirname(bed.kubeconfig), 'audit.log');
}

function apiserverArgs(dir: string, etcdPort: number, port: number): string[] {
  const pki = path.join(dir, 'pki');
  fs.writeFileSync(path.join(dir, 'audit-policy.yaml'), AUDIT_POLICY);
  return [
    `--audit-policy-file=${path.join(dir, 'audit-policy.yaml')}`,
    `--audit-log-path=${path.join(dir, 'audit.log')}`,
    '--audit-log-format=json',
    '--audit-log-mode=blocking',
    `--etcd-servers=http://127.0.0.1:${etcdPort}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${pki}`,
    `--tls-cert-file=${path.join(pki, 'apiserver.crt')}`,
    `--tls-private-key-file=${path.join(pki, 'apiserver.key')}`,
    `--client-ca-file=${path.join(pki, 'ca.crt')}`,
    `--service-account-key-file=${path.join(pki, 'sa.pub')}`,
    `--service-account-signing-key-file=${path.join(pki, 'sa.key')}`,
    '--service-account-issuer=https://kubernetes.default.svc',
    '--authorization-mode=RBAC',
    '--service-cluster-ip-range=10.0.0.0/24',
    '--allow-privileged=true',
    // No kubelet/controller-manager: the ServiceAccount admission plugin would wait for tokens.
    '--disable-admission-plugins=ServiceAccount',
    '--enable-priority-and-fairness=false',
    '--v=1',
  ];
}

/** Starts etcd and kube-apiserver on loopback, writes kubeconfigs and waits until /readyz is ok. */
export async function startKubernetes(dir: string, ownerPid: number): Promise<KubernetesBed> {
  const bins = ensureBinaries();
  fs.mkdirSync(dir, { recursive: true });
  generatePki(path.join(dir, 'pki'));
  const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const etcd = startProcess(
    {
      name: 'etcd',
      command: bins.etcd,
      args: etcdArgs(dir, etcdPort, peerPort),
      env: {},
      logFile: path.join(dir, 'etcd.log'),
    },
    ownerPid,
  );
  await waitUntil('etcd', async () => (await fetch(`http://127.0.0.1:${etcdPort}/health`)).ok, {
    timeoutMs: 30_000,
    logFile: etcd.logFile,
    pid: etcd.pid,
  });
  const server = `https://127.0.0.1:${apiPort}`;
  const kubeconfig = path.join(dir, 'admin.kubeconfig');
  const userKubeconfig = path.join(dir, 'user.kubeconfig');
  writeKubeconfig(kubeconfig, server, path.join(dir, 'pki'), 'admin');
  writeKubeconfig(userKubeconfig, server, path.join(dir, 'pki'), 'user');
  const apiserver = startKubeApiserver(dir, bins.apiserver, etcdPort, apiPort, ownerPid);
  const bed: KubernetesBed = {
    kubeconfig,
    userKubeconfig,
    server,
    version: K8S_VERSION,
    etcd,
    apiserver,
    etcdVersion: ETCD_VERSION,
  };
  await waitForApiserver(bed);
  return bed;
}

/**
 * Starts kube-controller-manager for a running bed (after the CRDs are applied, so the garbage
 * collector discovers LogPipelines at start instead of at its next discovery sync).
 */
export async function startBedControllerManager(bed: KubernetesBed, ownerPid: number): Promise<void> {
  const { controllerManager } = ensureBinaries();
  bed.controllerManager = await startControllerManager(
    bed,
    controllerManager,
    path.dirname(bed.kubeconfig),
    ownerPid,
  );
}

function startKubeApiserver(
  dir: string,
  bin: string,
  etcdPort: number,
  port: number,
  ownerPid: number,
): ServiceProcess {
  return startProcess(
    {
      name: 'kube-apiserver',
      command: bin,
      args: apiserverArgs(dir, etcdPort, port),
      env: {},
      logFile: path.join(dir, 'kube-apiserver.log'),
    },
    ownerPid,
  );
}

/** Waits until the apiserver answers /readyz for the admin identity. */
export async function waitForApiserver(bed: KubernetesBed, timeoutMs = 90_000): Promise<void> {
  await waitUntil('kube-apiserver', async () => (await adminRequest(bed, 'GET', '/readyz')).status === 200, {
    timeoutMs,
    logFile: bed.apiserver.logFile,
    pid: bed.apiserver.pid,
    intervalMs: 300,
  });
}

/** Stops only the apiserver (etcd keeps the data), for fault tests. */
export async function stopApiserver(bed: KubernetesBed): Promise<void> {
  await stopProcess(bed.apiserver);
}

/** Starts the apiserver again with the same arguments and port; returns the bed with the new pid. */
export async function startApiserver(bed: KubernetesBed, ownerPid: number): Promise<KubernetesBed> {
  const { pid: _old, ...spec } = bed.apiserver;
  const apiserver = startProcess(spec, ownerPid);
  const next = { ...bed, apiserver };
  await waitForApiserver(next);
  return next;
}

/** Stops controller-manager, apiserver, then etcd. */
export async function stopKubernetes(bed: KubernetesBed): Promise<void> {
  if (bed.controllerManager) await stopProcess(bed.controllerManager);
  await stopProcess(bed.apiserver);
  await stopProcess(bed.etcd);
}

/** Creates or updates every CRD in `crdDir` and waits until each is Established and in discovery. */
export async function applyCrds(bed: KubernetesBed, crdDir = path.join(REPO, 'crds')): Promise<string[]> {
  const { parseAllDocuments } = await import('yaml');
  const names: string[] = [];
  const files = fs.existsSync(crdDir) ? fs.readdirSync(crdDir).filter((f) => /\.ya?ml$/.test(f)) : [];
  for (const file of files) {
    for (const doc of parseAllDocuments(fs.readFileSync(path.join(crdDir, file), 'utf8'))) {
      const crd = doc.toJSON();
      if (crd?.kind !== 'CustomResourceDefinition') continue;
      await upsertCrd(bed, crd);
      names.push(crd.metadata.name);
    }
  }
  for (const name of names) await waitForCrd(bed, name);
  return names;
}

async function upsertCrd(bed: KubernetesBed, crd: { metadata: { name: string; resourceVersion?: string } }) {
  const base = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const created = await adminRequest(bed, 'POST', base, crd);
  if (created.status === 201) return;
  if (created.status !== 409)
    throw new Error(`CRD ${crd.metadata.name} rejected (${created.status}): ${created.body}`);
  const current = JSON.parse((await adminRequest(bed, 'GET', `${base}/${crd.metadata.name}`)).body);
  const updated = await adminRequest(bed, 'PUT', `${base}/${crd.metadata.name}`, {
    ...crd,
    metadata: { ...crd.metadata, resourceVersion: current.metadata.resourceVersion },
  });
  if (updated.status !== 200)
    throw new Error(`CRD ${crd.metadata.name} update rejected (${updated.status}): ${updated.body}`);
}

async function waitForCrd(bed: KubernetesBed, name: string): Promise<void> {
  const [plural, ...groupParts] = name.split('.');
  const group = groupParts.join('.');
  await waitUntil(
    `CRD ${name} Established and discoverable`,
    async () => {
      const crd = JSON.parse(
        (await adminRequest(bed, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`))
          .body,
      );
      const established = crd.status?.conditions?.some(
        (c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True',
      );
      if (!established) return false;
      const versions: Array<{ name: string; served: boolean }> = crd.spec.versions;
      for (const v of versions.filter((x) => x.served)) {
        const disc = await adminRequest(bed, 'GET', `/apis/${group}/${v.name}`);
        if (
          disc.status !== 200 ||
          !JSON.parse(disc.body).resources?.some((r: { name: string }) => r.name === plural)
        )
          return false;
      }
      return true;
    },
    { timeoutMs: 30_000, logFile: bed.apiserver.logFile },
  );
}
