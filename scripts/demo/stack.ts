/**
 * The demo's stack: the test bed (Kubernetes API server, Kafka, ClickHouse engine), the operator
 * and the local pod runner as supervised processes, the example pipeline applied, and an orderly
 * stop (workers drain first, then the operator, then the bed).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION, type LogPipeline } from '../../operator/src/api/types';
import { startTestBed, stopTestBed } from '../../test/env/bed';
import { freePort, startProcess, stopProcess, type ServiceProcess } from '../../test/env/process';
import { stateFile, type TestBed } from '../../test/env/testbed';
import { buildDemoManifest, type DemoManifest } from './manifest';

/** Everything the demo started. */
export interface Stack {
  bed: TestBed;
  dir: string;
  stateFile: string;
  kubeconfig: string;
  operator: ServiceProcess;
  operatorMetricsPort: number;
  podRunner: ServiceProcess;
  manifest: DemoManifest;
  keep: boolean;
}

/** How to start the stack. */
export interface StackOptions {
  keep: boolean;
  example: string;
  namespace: string;
  maxReplicas: number;
  lagPerReplica: number;
  /** Local port of the pipeline's syslog receiver; absent with --direct. */
  syslogPort?: number;
  /** Progress messages for the user. */
  say: (msg: string) => void;
}

const DIST = path.resolve(__dirname, '../..');

/**
 * Where the bed's state goes. A kept stack is recorded where `npm run env:down` looks (like
 * env:up); a throwaway one in its own directory, so it never overwrites another bed's state.
 */
function prepareState(keep: boolean): { dir: string; file: string } {
  if (!keep) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'logpipeline-demo-'));
    return { dir, file: path.join(dir, 'state.json') };
  }
  const file = stateFile();
  if (fs.existsSync(file))
    throw new Error(`a test bed is already recorded at ${file}; run 'npm run env:down' first`);
  const dir = path.join(path.dirname(file), 'demo');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return { dir, file };
}

function signingKeyPem(): string {
  const { privateKey } = crypto.generateKeyPairSync('ed25519');
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

async function ignoreConflict(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}

/** Creates the namespace, the Secrets and the LogPipeline (existing ones are left as they are). */
async function applyManifest(kubeconfig: string, namespace: string, manifest: DemoManifest): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  await ignoreConflict(core.createNamespace({ body: { metadata: { name: namespace } } }));
  for (const s of manifest.secrets) {
    await ignoreConflict(
      core.createNamespacedSecret({
        namespace,
        body: { metadata: { name: s.name }, type: 'Opaque', stringData: s.stringData },
      }),
    );
  }
  await ignoreConflict(
    custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      namespace,
      body: manifest.pipeline,
    }),
  );
}

async function startOperator(bed: TestBed, dir: string, namespace: string, ownerPid: number) {
  const port = await freePort();
  const svc = startProcess(
    {
      name: 'operator',
      command: process.execPath,
      args: [
        path.join(DIST, 'operator/src/main.js'),
        '--kubeconfig',
        bed.kubernetes!.kubeconfig,
        '--namespaces',
        namespace,
        '--leader-elect',
        'false',
        '--metrics-port',
        String(port),
      ],
      env: { LOG_LEVEL: 'info' },
      logFile: path.join(dir, 'operator.log'),
    },
    ownerPid,
  );
  return { svc, port };
}

function startPodRunner(bed: TestBed, dir: string, ownerPid: number): ServiceProcess {
  return startProcess(
    {
      name: 'pod-runner',
      command: process.execPath,
      args: [
        path.join(DIST, 'scripts/demo/pod-runner-main.js'),
        '--kubeconfig',
        bed.kubernetes!.kubeconfig,
        '--dir',
        path.join(dir, 'pods'),
      ],
      env: {},
      logFile: path.join(dir, 'pod-runner.log'),
    },
    ownerPid,
  );
}

/** Starts the bed, the operator and the pod runner, and applies the example pipeline. */
export async function startStack(opts: StackOptions): Promise<Stack> {
  const { dir, file } = prepareState(opts.keep);
  // startTestBed records the bed in stateFile(); point it at this run's file.
  process.env.LP_TESTBED_FILE = file;
  const ownerPid = opts.keep ? 0 : process.pid;
  const yamlText = fs.readFileSync(opts.example, 'utf8');
  opts.say(`starting the local stack in ${dir} (Kubernetes API server, Kafka, ClickHouse engine)…`);
  const bed = await startTestBed({ ownerPid, dir: path.join(dir, 'bed') });
  const partial = { bed, dir, stateFile: file, keep: opts.keep };
  let operator: { svc: ServiceProcess; port: number } | undefined;
  let podRunner: ServiceProcess | undefined;
  try {
    const manifest = buildDemoManifest(
      yamlText,
      {
        kafkaBootstrap: bed.kafka!.bootstrap,
        clickhouseUrl: bed.clickhouse!.url,
        clickhouseUser: bed.clickhouse!.username,
        clickhousePassword: bed.clickhouse!.password,
        signingKeyPem: signingKeyPem(),
      },
      {
        namespace: opts.namespace,
        maxReplicas: opts.maxReplicas,
        lagPerReplica: opts.lagPerReplica,
        syslogPort: opts.syslogPort,
      },
    );
    for (const note of manifest.notes) opts.say(`  example adjusted: ${note}`);
    operator = await startOperator(bed, dir, opts.namespace, ownerPid);
    podRunner = startPodRunner(bed, dir, ownerPid);
    opts.say(
      `operator pid ${operator.svc.pid} (log ${operator.svc.logFile}), pod runner pid ${podRunner.pid}`,
    );
    await applyManifest(bed.kubernetes!.kubeconfig, opts.namespace, manifest);
    opts.say(
      `applied ${opts.example} as ${opts.namespace}/${manifest.pipeline.metadata.name} (+${manifest.secrets.length} Secrets)`,
    );
    return {
      ...partial,
      kubeconfig: bed.kubernetes!.kubeconfig,
      operator: operator.svc,
      operatorMetricsPort: operator.port,
      podRunner,
      manifest,
    };
  } catch (err) {
    await stopStack({ ...partial, operator: operator?.svc, podRunner });
    throw err;
  }
}

/** Stops what runs: workers (drain + commit) and the operator, then the bed; removes the state file. */
export async function stopStack(
  stack: Pick<Stack, 'bed' | 'stateFile'> & { operator?: ServiceProcess; podRunner?: ServiceProcess },
): Promise<void> {
  await Promise.allSettled([
    stack.podRunner ? stopProcess(stack.podRunner, 'SIGTERM', 40_000) : undefined,
    stack.operator ? stopProcess(stack.operator, 'SIGTERM', 35_000) : undefined,
  ]);
  await stopTestBed(stack.bed);
  fs.rmSync(stack.stateFile, { force: true });
}

/**
 * Deletes everything under `dir` except log files (`*.log`, not Kafka's numbered segments), so a failed run keeps what explains
 * it without keeping hundreds of MiB of Kafka and ClickHouse data in the temp directory.
 */
export function pruneToLogs(dir: string): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      pruneToLogs(full);
      if (fs.readdirSync(full).length === 0) fs.rmdirSync(full);
    } else if (!entry.name.endsWith('.log') || /^\d+\.log$/.test(entry.name)) {
      // (Kafka's segment files are named <offset>.log: data, not logs.)
      fs.rmSync(full, { force: true });
    }
  }
}

/** Reads the pipeline as the operator last wrote it (undefined while it does not exist). */
export async function readPipeline(
  custom: CustomObjectsApi,
  namespace: string,
  name: string,
): Promise<LogPipeline | undefined> {
  try {
    return (await custom.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      namespace,
      name,
    })) as LogPipeline;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}
