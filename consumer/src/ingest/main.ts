/**
 * Syslog receiver entry point, the worker image's third one:
 *   node dist/consumer/src/ingest/main.js [--config <path>]
 * Listens (UDP/TCP/TLS), packs lines per sender, produces to the pipeline's topic (idempotent,
 * acks=all, values compressed with zstd or LZ4 by the sink, SENDER_HEADER). Serves /metrics, /healthz, /readyz (ready = listening, Kafka
 * answered within READY_WINDOW_MS, not stopping). SIGTERM: readiness fails at once, stop accepting,
 * read open connections for a grace, cut every open message, wait for Kafka's acks within
 * drainTimeoutMs, exit 0. Logs are JSON lines, never per line of data, never credentials.
 */
import fs from 'node:fs';
import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import type { IngestConfig } from '../../../common/src/ingest-config';
import { registerKafkaCodecs } from '../../../common/src/kafka/codecs';
import type { Logger } from '../../../common/src/log';
import { applyArgs, peakRssMiB, watchParent } from '../../../common/src/process-lifecycle';
import { startProcessLog } from '../process-log';
import { startProbeServer } from '../../../common/src/probe-server';
import { errorReason } from '../sink/retry';
import { KafkaStart, runEntryPoint } from '../kafka-start';
import { deadLetterSendLimit } from '../worker-parts';
import { kafkaClientConfig, readSecrets } from '../worker-tuning';
import { FlowGate } from './flow-gate';
import { loadIngestConfig } from './ingest-config';
import { KafkaSink } from './kafka-sink';
import { isTooLarge } from './too-large';
import { IngestMetrics } from './metrics';
import { SyslogReceiver, type TlsMaterial } from './receiver';

/** Readiness needs a Kafka answer (a metadata probe or a send's ack) this recent. */
export const READY_WINDOW_MS = 10_000;
const PROBE_INTERVAL_MS = 3_000;
/** Time past the drain bound before the backstop ends the process. */
const STOP_GRACE_MS = 3_000;

/** Pure readiness rule (unit-tested). */
export function ingestReady(s: {
  listening: boolean;
  stopping: boolean;
  now: number;
  lastKafkaOkMs: number;
  lastKafkaFailureMs: number;
}): { ready: boolean; reason: string } {
  if (s.stopping) return { ready: false, reason: 'stopping' };
  if (!s.listening) return { ready: false, reason: 'not listening yet' };
  if (s.now - s.lastKafkaOkMs > READY_WINDOW_MS) return { ready: false, reason: 'kafka unreachable' };
  if (s.lastKafkaFailureMs > s.lastKafkaOkMs) return { ready: false, reason: 'kafka send failing' };
  return { ready: true, reason: 'ok' };
}

/** The TLS files named by the config, read once at start (a rotated Secret restarts the pod). */
function readTls(cfg: IngestConfig): TlsMaterial | undefined {
  if (!cfg.tls) return undefined;
  return {
    cert: fs.readFileSync(cfg.tls.certFile),
    key: fs.readFileSync(cfg.tls.keyFile),
    ca: cfg.tls.caFile ? fs.readFileSync(cfg.tls.caFile) : undefined,
    clientAuth: cfg.tls.clientAuth,
  };
}

/** The sink with its metrics: what Kafka acknowledged, how long it took, what failed. */
function buildSink(
  cfg: IngestConfig,
  kafka: Kafka,
  gate: FlowGate,
  metrics: IngestMetrics,
  log: Logger,
  readLimit: () => Promise<number>,
) {
  // Idempotent: acks=all, and kafkajs's in-send retries reuse sequence numbers (no duplicates).
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  const state = { partitions: 1 };
  let lastTooLargeLogMs = 0;
  const sink = new KafkaSink(
    (record) => producer.send(record),
    gate,
    {
      topic: cfg.kafka.topic,
      // Values are compressed by the sink itself (value-codec.ts); the record batch goes as is.
      compression: CompressionTypes.None,
      valueEncoding: cfg.compression,
      partitions: () => state.partitions,
      partitionBudgetBytes: cfg.packing.maxBytes, // lowered once the topic's limit is read
      readLimit,
    },
    {
      sent(msgs, seconds) {
        metrics.produceSeconds.observe(seconds);
        const now = Date.now();
        let lines = 0;
        let bytes = 0;
        let wire = 0;
        for (const m of msgs) {
          lines += m.lines;
          bytes += m.plainBytes;
          wire += m.value.length;
          metrics.lineLatency.observe((now - m.firstLineMs) / 1000);
        }
        metrics.linesProduced.inc(lines);
        metrics.bytesProduced.inc(bytes);
        metrics.wireBytesProduced.inc(wire);
        metrics.messagesProduced.inc(msgs.length);
      },
      failed(err, attempt) {
        metrics.produceFailures.inc();
        // A refused-as-too-large send is shrunk, not retried: one line per episode, not per split.
        if (isTooLarge(err) && Date.now() - lastTooLargeLogMs < REFUSAL_LOG_INTERVAL_MS) return;
        if (isTooLarge(err)) lastTooLargeLogMs = Date.now();
        log.warn('kafka send failed; retrying', { err: errorReason(err), attempt });
      },
      split: () => metrics.tooLarge.inc({ action: 'split' }),
      dropped(m) {
        metrics.tooLarge.inc({ action: 'dropped' });
        log.warn('line dropped: Kafka refuses it as too large even alone', {
          sender: m.sender,
          bytes: m.plainBytes,
        });
      },
    },
  );
  return { producer, sink, state };
}

/** Time between two log lines about refused TLS clients of one reason (a rogue sender retries for ever). */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

/** Logs why TLS clients are refused, once per reason and interval, with how many were left unsaid. */
function refusalLogger(log: Logger): (listener: string, reason: string) => void {
  const last = new Map<string, { at: number; suppressed: number }>();
  return (listener, reason) => {
    const key = `${listener}\u0000${reason}`;
    const now = Date.now();
    const seen = last.get(key);
    if (seen && now - seen.at < REFUSAL_LOG_INTERVAL_MS) {
      seen.suppressed++;
      return;
    }
    log.warn('tls client refused', { listener, reason, suppressedSinceLast: seen?.suppressed ?? 0 });
    if (last.size > 256) last.clear(); // reasons carry OpenSSL texts: keep the memo bounded
    last.set(key, { at: now, suppressed: 0 });
  };
}

async function main(): Promise<void> {
  applyArgs(process.argv.slice(2), process.env);
  const cfg = loadIngestConfig(process.env);
  const log = startProcessLog('ingest', cfg.pipeline);
  registerKafkaCodecs();
  const metrics = new IngestMetrics();
  const kafka = new Kafka({
    ...kafkaClientConfig(cfg, readSecrets(process.env), 30_000),
    logLevel: logLevel.ERROR,
  });
  const gate = new FlowGate(cfg.maxBytesHeld);
  const admin = kafka.admin();
  // Re-read when Kafka refuses a send as too large (the limit was lowered after start).
  const readLimit = () => deadLetterSendLimit(admin, cfg.kafka.topic);
  const { producer, sink, state } = buildSink(cfg, kafka, gate, metrics, log, readLimit);
  const receiver = new SyslogReceiver(
    {
      listeners: cfg.listeners,
      packing: cfg.packing,
      maxFrameBytes: cfg.maxFrameBytes,
      allowedSourceCIDRs: cfg.allowedSourceCIDRs,
      tls: readTls(cfg),
      udpReceiveBufferBytes: cfg.udpReceiveBufferBytes,
      onTlsRefused: refusalLogger(log),
    },
    gate,
    sink,
    metrics,
  );
  let lastProbeOk = 0;
  let listening = false;
  let stopping = false;
  // Until Kafka first answers, readiness names why it does not (e.g. "Kafka unreachable: ...").
  const start = new KafkaStart('kafka connect', log);
  const health = {
    alive: () => true,
    ready: () =>
      (!stopping && listening && start.notReady()) ||
      ingestReady({
        listening,
        stopping,
        now: Date.now(),
        lastKafkaOkMs: Math.max(lastProbeOk, sink.lastAckMs),
        lastKafkaFailureMs: sink.lastFailureMs,
      }),
  };
  const server = await startProbeServer(cfg.httpPort, metrics, health);

  // A send may hang inside kafkajs's own retries without failing: readiness asks the brokers itself.
  const probe = async () => {
    try {
      const md = await admin.fetchTopicMetadata({ topics: [cfg.kafka.topic] });
      state.partitions = md.topics[0]?.partitions.length || state.partitions;
      lastProbeOk = Date.now();
    } catch (err) {
      log.warn('kafka metadata probe failed', { err: errorReason(err) });
    }
  };
  const probeTimer = setInterval(() => void probe(), PROBE_INTERVAL_MS);
  probeTimer.unref();

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('draining', { signal });
    setTimeout(() => {
      log.warn('drain overran its bound; exiting', { drainTimeoutMs: cfg.drainTimeoutMs });
      process.exit(0);
    }, cfg.drainTimeoutMs + STOP_GRACE_MS).unref();
    await receiver.stop();
    const clean = await sink.drain(cfg.drainTimeoutMs);
    const cpu = process.cpuUsage();
    log.info('receiver stopped', {
      clean,
      cpuUserSeconds: cpu.user / 1e6,
      cpuSystemSeconds: cpu.system / 1e6,
      peakRssMiB: peakRssMiB(),
      listeners: receiver.snapshot(),
    });
    clearInterval(probeTimer);
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
    await server.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  watchParent(process.env, () => void stop('parent exited'));

  // Listen first (senders queue on their side meanwhile; the gate bounds memory), then connect.
  await receiver.start();
  listening = true;
  log.info('receiver listening', { ports: Object.fromEntries(receiver.ports), topic: cfg.kafka.topic });
  const connected = await start.run(
    async () => {
      await producer.connect();
      await admin.connect();
      await probe();
      sink.setPartitionBudget(await readLimit());
    },
    () => stopping,
  );
  if (connected) log.info('kafka connected', { partitions: state.partitions });
}

if (require.main === module) runEntryPoint('receiver failed to start', main);
