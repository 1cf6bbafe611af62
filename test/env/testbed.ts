/**
 * The test bed: real Kubernetes control plane, Kafka and ClickHouse engine on loopback.
 * Started once (jest globalSetup, env:up, the demo); its state is a JSON file so any process
 * (jest workers, benchmarks, CLIs) can find the endpoints and stop/restart a service.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ServiceProcess } from './process';

/** Endpoints and processes of the Kubernetes part (etcd + kube-apiserver). */
export interface KubernetesBed {
  /** Admin kubeconfig (system:masters). */
  kubeconfig: string;
  /** Kubeconfig of a non-admin identity with no RBAC grants (for RBAC tests). */
  userKubeconfig: string;
  server: string;
  version: string;
  etcd: ServiceProcess;
  apiserver: ServiceProcess;
  /** kube-controller-manager (garbage collector + namespace controllers), built from the same version. */
  controllerManager?: ServiceProcess;
  etcdVersion: string;
}

/** Endpoints and process of the Kafka broker. */
export interface KafkaBed {
  bootstrap: string;
  version: string;
  clusterId: string;
  process: ServiceProcess;
}

/** Endpoint and process of the ClickHouse engine served over HTTP. */
export interface ClickHouseBed {
  url: string;
  username: string;
  password: string;
  version: string;
  dataDir: string;
  /** Present only when the bed started the server itself (absent with CLICKHOUSE_URL). */
  process?: ServiceProcess;
}

/** Everything a test needs to reach the bed. */
export interface TestBed {
  dir: string;
  kubernetes?: KubernetesBed;
  kafka?: KafkaBed;
  clickhouse?: ClickHouseBed;
}

/** Where the state file of the current bed lives (set by whoever started it). */
export function stateFile(): string {
  return (
    process.env.LP_TESTBED_FILE ??
    path.join(process.env.TMPDIR ?? '/tmp', 'logpipeline-testbed', 'state.json')
  );
}

/** Reads the bed's state; throws a clear error when no bed is running. */
export function readTestBed(): TestBed {
  const file = stateFile();
  if (!fs.existsSync(file)) {
    throw new Error(`no test bed state at ${file}: start it with 'npm run env:up' or run through jest`);
  }
  return JSON.parse(fs.readFileSync(file, 'utf8')) as TestBed;
}

/**
 * A new directory inside the running bed's own directory, removed with the bed (a test's pods,
 * certificates, configs and logs; in os.tmpdir() they outlived the run).
 */
export function bedScratchDir(prefix: string): string {
  return fs.mkdtempSync(path.join(readTestBed().dir, prefix));
}

/** Persists the bed's state (after start or after a service restart changed a pid). */
export function writeTestBed(bed: TestBed): void {
  fs.mkdirSync(path.dirname(stateFile()), { recursive: true });
  fs.writeFileSync(stateFile(), JSON.stringify(bed, null, 2));
}
