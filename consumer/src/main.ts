/**
 * Worker entry point (`node dist/consumer/src/main.js [--config <path>]`): loads the config
 * (--config, else LP_CONFIG, else the mounted default; env overrides), reads credentials from the
 * SECRET_ENV variables, serves /metrics, /healthz, /readyz, runs the worker and drains it on
 * SIGTERM/SIGINT within the drain bound, then exits 0. Logs are JSON lines, never per line of data,
 * never credentials. At exit it logs the process CPU time and counters (the benchmark reads them).
 */

// First: replaces parts of kafkajs that kafkajs captures when it loads (kafkajs-preload.ts).
import '../../common/src/kafka/kafkajs-preload';
import { loadWorkerConfig } from '../../common/src/worker-config';
import { startProcessLog } from './process-log';
import { startProbeServer } from '../../common/src/probe-server';
import { WorkerMetrics } from './observability/metrics';
import { errorReason } from './sink/retry';
import { KafkaStart, runEntryPoint } from './kafka-start';
import { watchFatal, writeTerminationMessage } from './termination';
import { Worker } from './worker';
import { readSecrets } from './worker-tuning';
import { applyArgs, peakRssMiB, watchParent } from '../../common/src/process-lifecycle';
import { stageCpu } from '../../common/src/stage-cpu';

export { applyArgs, watchParent };

async function counter(metrics: WorkerMetrics, name: string): Promise<number> {
  const m = await metrics.registry.getSingleMetric(name)?.get();
  return (m?.values ?? []).reduce((sum, v) => sum + v.value, 0);
}

/** Time past the drain bound before the backstop ends the process (the drain itself keeps ~2 s spare). */
const STOP_GRACE_MS = 3_000;

async function main(): Promise<void> {
  applyArgs(process.argv.slice(2), process.env);
  const cfg = loadWorkerConfig(process.env);
  const log = startProcessLog('worker', cfg.pipeline);
  const metrics = new WorkerMetrics();
  const worker = new Worker(cfg, readSecrets(process.env), metrics, log);
  // Until the consumer first runs, readiness names why it does not (e.g. "Kafka unreachable: ...").
  const start = new KafkaStart('consumer start', log);
  const health = { alive: () => worker.alive(), ready: () => start.notReady() ?? worker.ready() };
  stageCpu.observeGc();
  const server = await startProbeServer(cfg.httpPort, metrics, health);
  log.info('worker starting', {
    topic: cfg.kafka.topic,
    group: cfg.kafka.groupId,
    table: `${cfg.clickhouse.database}.${cfg.clickhouse.table}`,
    httpPort: server.port,
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('draining', { signal });
    // Backstop: whatever a drain waits on (a dead broker, a hung socket), the process ends in time.
    setTimeout(() => {
      log.warn('drain overran its bound; exiting', { drainTimeoutMs: worker.tuning.drainTimeoutMs });
      process.exit(0);
    }, worker.tuning.drainTimeoutMs + STOP_GRACE_MS).unref();
    const { clean } = await worker.drain();
    const cpu = process.cpuUsage();
    const ru = process.resourceUsage();
    log.info('worker stopped', {
      clean,
      cpuUserSeconds: cpu.user / 1e6,
      cpuSystemSeconds: cpu.system / 1e6,
      cpuAtFirstJoinSeconds: worker.cpuAtFirstJoinSeconds(),
      peakRssMiB: peakRssMiB() ?? Math.round(ru.maxRSS / 1024),
      minorPageFaults: ru.minorPageFault,
      contextSwitches: ru.voluntaryContextSwitches + ru.involuntaryContextSwitches,
      lines: await counter(metrics, 'logpipeline_worker_lines_total'),
      rowsInserted: await counter(metrics, 'logpipeline_worker_rows_inserted_total'),
      deadLetters: await counter(metrics, 'logpipeline_worker_dead_letters_total'),
      encodeSeconds: await counter(metrics, 'logpipeline_worker_encode_seconds_total'),
      stageCpu: stageCpu.summary(),
    });
    await server.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  watchParent(process.env, () => void stop('parent exited'));

  // Kafka may not be reachable yet: keep trying rather than crash-looping the pod.
  if (
    !(await start.run(
      () => worker.start(),
      () => stopping,
    ))
  )
    return;
  log.info('consumer running');
  // A consumer that stopped for good (e.g. a codec it cannot read) is a crash, not a quiet
  // stall: exit with the reason in the termination message so the pod, the operator and
  // GitOps tools all say why.
  watchFatal(worker, (err) => {
    if (stopping) return;
    log.error('consumer stopped for good; exiting', { err: errorReason(err) });
    writeTerminationMessage(err);
    process.exit(1);
  });
}

if (require.main === module) runEntryPoint('worker failed to start', main);
