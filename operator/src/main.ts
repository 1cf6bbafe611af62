/**
 * The operator process: configuration from flags and environment, the manager, the HTTP endpoint
 * (/metrics, /healthz, /readyz), and a graceful shutdown on SIGTERM/SIGINT that releases the
 * leader lease so a standby takes over within one retry period.
 *
 * Flags (env): --kubeconfig (KUBECONFIG; else in-cluster, else ~/.kube/config),
 * --namespaces a,b (WATCH_NAMESPACES; empty = all), --leader-elect true|false (LEADER_ELECT),
 * --lease-namespace (LEASE_NAMESPACE, else POD_NAMESPACE, else default), --lease-name (LEASE_NAME),
 * --metrics-port (METRICS_PORT, 8080), --concurrency (CONCURRENCY, 32), --log-level (LOG_LEVEL),
 * --clickhouse-ddl-in-flight (CLICKHOUSE_DDL_IN_FLIGHT, 4: per server), --kafka-admin-in-flight
 * (KAFKA_ADMIN_IN_FLIGHT, 8: per cluster), --external-recheck-seconds (EXTERNAL_RECHECK_SECONDS, 300:
 * how long a clean topic/table check is reused before the next drift check).
 */
import os from 'node:os';
import { KubeConfig } from './apply/kube-lib';
import { configureDefaults } from './api/defaults';
import { configureBackendLimits, DEFAULT_BACKEND_LIMITS } from './apply/in-flight';
import { DEFAULT_CONCURRENCY, Manager } from './controller/manager';
import { registerExternalParts } from './controller/parts';
import { registrySource, startProbeServer } from '../../common/src/probe-server';
import { createLogger, type LogLevel } from '../../common/src/log';
import { OperatorMetrics } from './observability/metrics';

/** Parsed operator configuration. */
export interface OperatorConfig {
  kubeconfig?: string;
  namespaces: string[];
  leaderElect: boolean;
  leaseNamespace: string;
  leaseName: string;
  metricsPort: number;
  concurrency: number;
  /** DDL statements in flight per ClickHouse server; 0: unlimited. */
  clickhouseDdlInFlight: number;
  /** Admin operations in flight per Kafka cluster; 0: unlimited. */
  kafkaAdminInFlight: number;
  /** Reuse of a clean topic/table check, in ms; 0: check on every reconcile. */
  externalRecheckMs: number;
  logLevel: LogLevel;
  identity: string;
}

/** Reads flags (`--name value` or `--name=value`) over environment variables over defaults. */
export function parseConfig(argv: string[], env: NodeJS.ProcessEnv): OperatorConfig {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i]);
    if (!m) throw new Error(`unexpected argument ${argv[i]}`);
    flags.set(m[1], m[2] ?? argv[++i] ?? '');
  }
  const get = (flag: string, envName: string) => flags.get(flag) ?? env[envName];
  const int = (text: string | undefined, dflt: number, what: string) => {
    const n = text === undefined || text === '' ? dflt : Number(text);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${what} must be a non-negative integer`);
    return n;
  };
  const namespaces = (get('namespaces', 'WATCH_NAMESPACES') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    kubeconfig: get('kubeconfig', 'KUBECONFIG') || undefined,
    namespaces,
    leaderElect: (get('leader-elect', 'LEADER_ELECT') ?? 'true') !== 'false',
    leaseNamespace: get('lease-namespace', 'LEASE_NAMESPACE') || env.POD_NAMESPACE || 'default',
    leaseName: get('lease-name', 'LEASE_NAME') || 'logpipeline-operator',
    metricsPort: int(get('metrics-port', 'METRICS_PORT'), 8080, 'metrics port'),
    concurrency: Math.max(1, int(get('concurrency', 'CONCURRENCY'), DEFAULT_CONCURRENCY, 'concurrency')),
    clickhouseDdlInFlight: int(
      get('clickhouse-ddl-in-flight', 'CLICKHOUSE_DDL_IN_FLIGHT'),
      DEFAULT_BACKEND_LIMITS.clickhouseDdl,
      'clickhouse ddl in flight',
    ),
    kafkaAdminInFlight: int(
      get('kafka-admin-in-flight', 'KAFKA_ADMIN_IN_FLIGHT'),
      DEFAULT_BACKEND_LIMITS.kafkaAdmin,
      'kafka admin in flight',
    ),
    externalRecheckMs:
      1000 *
      int(get('external-recheck-seconds', 'EXTERNAL_RECHECK_SECONDS'), 300, 'external recheck seconds'),
    logLevel: (get('log-level', 'LOG_LEVEL') as LogLevel) || 'info',
    identity: env.POD_NAME || `${os.hostname()}_${process.pid}`,
  };
}

/** Loads the kubeconfig: an explicit file, else in-cluster, else the default locations. */
export function loadKubeConfig(file?: string): KubeConfig {
  const kc = new KubeConfig();
  if (file) kc.loadFromFile(file);
  else if (process.env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster();
  else kc.loadFromDefault();
  return kc;
}

async function main(): Promise<void> {
  const cfg = parseConfig(process.argv.slice(2), process.env);
  // The chart passes its worker image here so `worker.image` applies to every pipeline without one.
  configureDefaults({
    workerImage: process.env.LP_WORKER_IMAGE,
    workerImagePullPolicy: process.env.LP_WORKER_IMAGE_PULL_POLICY,
    // Comma-separated repositories (or registry paths ending in /) workers may run from.
    allowedWorkerImages: (process.env.LP_ALLOWED_WORKER_IMAGES ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  });
  configureBackendLimits({ clickhouseDdl: cfg.clickhouseDdlInFlight, kafkaAdmin: cfg.kafkaAdminInFlight });
  const log = createLogger({ level: cfg.logLevel, base: { component: 'operator', instance: cfg.identity } });
  const metrics = new OperatorMetrics({ defaultMetrics: true });
  const manager = new Manager({
    kubeConfig: loadKubeConfig(cfg.kubeconfig),
    namespaces: cfg.namespaces,
    concurrency: cfg.concurrency,
    externalRecheckMs: cfg.externalRecheckMs,
    identity: cfg.identity,
    leaderElection: cfg.leaderElect ? { namespace: cfg.leaseNamespace, name: cfg.leaseName } : false,
    log,
    metrics,
  });
  const external = registerExternalParts(manager, { registry: metrics.registry });
  const server = await startProbeServer(cfg.metricsPort, registrySource(metrics.registry), {
    // Alive while the process answers and its event loop is not stalled (checked by the server).
    alive: () => true,
    ready: () =>
      manager.isReady() ? { ready: true, reason: 'ok' } : { ready: false, reason: 'caches not synced' },
  });
  manager.start();
  log.info('operator started', {
    namespaces: cfg.namespaces.length ? cfg.namespaces : 'all',
    leaderElect: cfg.leaderElect,
    metricsPort: server.port,
  });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    manager
      .stop()
      .then(() => external.close())
      .then(() => server.close())
      .then(
        () => process.exit(0),
        (err: Error) => {
          log.error('shutdown failed', { err: err.message });
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

if (require.main === module) {
  main().catch((err: Error) => {
    process.stderr.write(
      JSON.stringify({ level: 'error', msg: 'operator failed to start', err: err.message }) + '\n',
    );
    process.exit(1);
  });
}
