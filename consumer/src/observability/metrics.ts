/**
 * The worker's Prometheus metrics (prom-client, one registry per worker). Names are a contract:
 * the operator's autoscaler reads `logpipeline_worker_insert_failures_total` and the lag gauge,
 * dashboards read the rest. Label values are bounded: partitions, parser reason codes, a fixed
 * set of failure kinds — never line content or ClickHouse messages.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Every metric of one worker process. */
export class WorkerMetrics {
  readonly registry = new Registry();
  readonly messagesIn: Counter;
  readonly linesIn: Counter;
  readonly bytesIn: Counter;
  readonly rowsInserted: Counter;
  readonly deadLetters: Counter<'reason'>;
  readonly valueDecodeFailures: Counter<'reason'>;
  readonly batchDecodeFailures: Counter<'reason'>;
  readonly batches: Counter<'outcome'>;
  readonly batchRows: Histogram;
  readonly insertDuration: Histogram<'target'>;
  readonly insertFailures: Counter<'kind'>;
  readonly lag: Gauge<'partition'>;
  readonly bytesInFlight: Gauge;
  readonly batchesInFlight: Gauge;
  readonly commits: Counter<'outcome'>;
  readonly cpuSeconds: Gauge<'mode'>;
  readonly encodeSeconds: Counter;
  readonly rowsByVendor: Counter<'vendor'>;
  readonly rowsMissingIdentity: Counter<'field'>;
  readonly blankLines: Counter;
  readonly offsetResets: Counter<'partition'>;

  /** Registers all metrics; `defaults` adds prom-client's process metrics (CPU, memory, event loop). */
  constructor(defaults = true) {
    const registers = [this.registry];
    this.rowsByVendor = new Counter({
      name: 'logpipeline_worker_rows_by_vendor_total',
      help: 'Parsed rows by the format that read them (including rows refused for a missing required field).',
      labelNames: ['vendor'],
      registers,
    });
    this.rowsMissingIdentity = new Counter({
      name: 'logpipeline_worker_rows_missing_identity_total',
      help: 'Parsed rows lacking an identity field (src_ip, dst_ip, src_port, dst_port), whatever the requiredFields policy.',
      labelNames: ['field'],
      registers,
    });
    const p = 'logpipeline_worker_';
    this.messagesIn = new Counter({
      name: `${p}messages_total`,
      help: 'Kafka messages consumed.',
      registers,
    });
    this.linesIn = new Counter({
      name: `${p}lines_total`,
      help: 'Log lines consumed (a message may hold many).',
      registers,
    });
    this.bytesIn = new Counter({
      name: `${p}bytes_total`,
      help: 'Bytes of message values consumed.',
      registers,
    });
    this.rowsInserted = new Counter({
      name: `${p}rows_inserted_total`,
      help: 'Rows in successful INSERTs; a re-sent batch counts again unless the server reports it deduplicated (0 rows written).',
      registers,
    });
    this.deadLetters = new Counter({
      name: `${p}dead_letters_total`,
      help: 'Lines sent to the dead-letter queue, by reason.',
      labelNames: ['reason'],
      registers,
    });
    this.valueDecodeFailures = new Counter({
      name: `${p}value_decode_failures_total`,
      help: 'Messages whose content-encoding header named a value they could not be decoded with (dead-lettered whole), by reason (too_large, corrupt, unknown_encoding).',
      labelNames: ['reason'],
      registers,
    });
    this.batchDecodeFailures = new Counter({
      name: `${p}record_batch_decode_failures_total`,
      help: 'Kafka record batches that could not be decompressed (dead-lettered whole, committed past), by reason (too_large: past the batch bound, corrupt).',
      labelNames: ['reason'],
      registers,
    });
    this.batches = new Counter({
      name: `${p}batches_total`,
      help: 'Batches delivered, by outcome (stored, deduplicated, abandoned).',
      labelNames: ['outcome'],
      registers,
    });
    this.batchRows = new Histogram({
      name: `${p}batch_rows`,
      help: 'Lines per delivered batch.',
      buckets: [1, 10, 100, 1_000, 5_000, 10_000, 50_000, 100_000, 500_000, 1_000_000],
      registers,
    });
    this.insertDuration = new Histogram({
      name: `${p}insert_duration_seconds`,
      help: 'Latency of successful INSERTs, by target table.',
      labelNames: ['target'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.insertFailures = new Counter({
      name: `${p}insert_failures_total`,
      help: 'Failed INSERT attempts, by kind (retriable, rejected, systemic, dead_letter_topic).',
      labelNames: ['kind'],
      registers,
    });
    this.lag = new Gauge({
      name: `${p}partition_lag`,
      help: 'Messages behind the partition high watermark at the last fetch.',
      labelNames: ['partition'],
      registers,
    });
    this.bytesInFlight = new Gauge({
      name: `${p}bytes_in_flight`,
      help: 'Bytes held for batches not yet stored (raw plus encoded).',
      registers,
    });
    this.batchesInFlight = new Gauge({
      name: `${p}batches_in_flight`,
      help: 'Batches cut and not yet stored.',
      registers,
    });
    this.commits = new Counter({
      name: `${p}offset_commits_total`,
      help: 'Offset commits (watermark plus cut journal), by outcome.',
      labelNames: ['outcome'],
      registers,
    });
    this.encodeSeconds = new Counter({
      name: `${p}encode_seconds_total`,
      help: 'Process CPU seconds spent parsing and encoding batches (and copying their bodies).',
      registers,
    });
    this.blankLines = new Counter({
      name: `${p}blank_lines_total`,
      help: 'Blank lines (empty or only spaces/tabs) in stored batches: skipped, neither stored nor dead-lettered.',
      registers,
    });
    this.offsetResets = new Counter({
      name: `${p}offset_resets_total`,
      help: 'Fetches that found the position deleted by retention (OFFSET_OUT_OF_RANGE): the consumer jumped to the log start, the lines in between were lost.',
      labelNames: ['partition'],
      registers,
    });
    this.cpuSeconds = new Gauge({
      name: `${p}cpu_seconds`,
      help: 'CPU seconds used by this process (process.cpuUsage), by mode; for per-CPU-second throughput.',
      labelNames: ['mode'],
      registers,
      collect() {
        const u = process.cpuUsage();
        this.set({ mode: 'user' }, u.user / 1e6);
        this.set({ mode: 'system' }, u.system / 1e6);
      },
    });
    // Present from the start (at 0) so rate() and the autoscaler see the series before any failure.
    for (const kind of ['retriable', 'rejected', 'systemic', 'dead_letter_topic'])
      this.insertFailures.inc({ kind }, 0);
    for (const outcome of ['ok', 'failed']) this.commits.inc({ outcome }, 0);
    if (defaults) collectDefaultMetrics({ register: this.registry, prefix: p });
  }

  /** The text exposition of every metric. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** Content type of render(). */
  contentType(): string {
    return this.registry.contentType;
  }
}
