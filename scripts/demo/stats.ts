/**
 * What the live view shows, computed from raw samples: cumulative counters in, rates and short
 * histories (for sparklines) out. Pure: the collector feeds it samples with their timestamps.
 */

/** One condition as the view shows it. */
export interface ViewCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** Observations of one poll; fields are absent when their source could not be read this time. */
export interface Sample {
  atMs: number;
  /** Lines and messages acknowledged by Kafka so far (the producer's own counters). */
  producedLines: number;
  producedMessages: number;
  producedBytes: number;
  /** Rows in the pipeline's table and its dead-letter table. */
  insertedRows?: number;
  deadLetters?: number;
  /** Kafka consumer lag of the pipeline's group, in messages, summed over partitions. */
  lagMessages?: number;
  /** The operator's view: status.lag.total. */
  statusLag?: number;
  replicasDesired?: number;
  replicasCurrent?: number;
  replicasReady?: number;
  conditions?: ViewCondition[];
  /** Latest error per source (ClickHouse, Kafka, Kubernetes), for the status line. */
  errors?: string[];
}

/** Everything the renderer needs. */
export interface DemoView {
  phase: 'producing' | 'draining' | 'done';
  elapsedMs: number;
  durationMs: number;
  targetRate: number;
  linesPerMessage: number;
  producedLines: number;
  producedMessages: number;
  producedBytes: number;
  insertedRows: number;
  deadLetters: number;
  producedRate: number;
  insertedRate: number;
  producedHistory: number[];
  insertedHistory: number[];
  lagMessages?: number;
  statusLag?: number;
  replicasDesired?: number;
  replicasCurrent?: number;
  replicasReady?: number;
  maxReplicasSeen: number;
  conditions: ViewCondition[];
  errors: string[];
  /** Extra rows under the totals (the syslog receiver's rates when traffic goes through it). */
  extraLines?: string[];
}

/** Rates are averaged over this window so that a 2×/s refresh does not flicker. */
const RATE_WINDOW_MS = 2_000;

/** Accumulates samples; `view()` gives the current picture. */
export class StatsTracker {
  private readonly samples: Sample[] = [];
  private readonly producedHistory: number[] = [];
  private readonly insertedHistory: number[] = [];
  private latest: Sample = { atMs: 0, producedLines: 0, producedMessages: 0, producedBytes: 0 };
  private last: Required<Pick<Sample, 'insertedRows' | 'deadLetters'>> = { insertedRows: 0, deadLetters: 0 };
  private maxReplicas = 0;

  /** Keeps `historyLength` rate points for each sparkline. */
  constructor(
    private readonly startMs: number,
    private readonly settings: {
      durationMs: number;
      targetRate: number;
      linesPerMessage: number;
      historyLength: number;
    },
  ) {}

  /** Adds a poll's observations; values missing from it keep their last known value. */
  add(sample: Sample): void {
    const merged: Sample = { ...this.latest, ...definedOnly(sample), errors: sample.errors ?? [] };
    this.last = { insertedRows: merged.insertedRows ?? 0, deadLetters: merged.deadLetters ?? 0 };
    this.latest = merged;
    this.samples.push(merged);
    while (this.samples.length > 2 && merged.atMs - this.samples[1].atMs >= RATE_WINDOW_MS)
      this.samples.shift();
    this.maxReplicas = Math.max(this.maxReplicas, merged.replicasCurrent ?? 0);
    push(
      this.producedHistory,
      this.rate((s) => s.producedLines),
      this.settings.historyLength,
    );
    push(this.insertedHistory, this.rate(inserted), this.settings.historyLength);
  }

  /** The current picture for the renderer. */
  view(phase: DemoView['phase'], nowMs: number): DemoView {
    const s = this.latest;
    return {
      phase,
      elapsedMs: nowMs - this.startMs,
      durationMs: this.settings.durationMs,
      targetRate: this.settings.targetRate,
      linesPerMessage: this.settings.linesPerMessage,
      producedLines: s.producedLines,
      producedMessages: s.producedMessages,
      producedBytes: s.producedBytes,
      insertedRows: this.last.insertedRows,
      deadLetters: this.last.deadLetters,
      producedRate: this.rate((x) => x.producedLines),
      insertedRate: this.rate(inserted),
      producedHistory: [...this.producedHistory],
      insertedHistory: [...this.insertedHistory],
      lagMessages: s.lagMessages,
      statusLag: s.statusLag,
      replicasDesired: s.replicasDesired,
      replicasCurrent: s.replicasCurrent,
      replicasReady: s.replicasReady,
      maxReplicasSeen: this.maxReplicas,
      conditions: s.conditions ?? [],
      errors: s.errors ?? [],
    };
  }

  private rate(pick: (s: Sample) => number): number {
    if (this.samples.length < 2) return 0;
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    const dt = (last.atMs - first.atMs) / 1000;
    return dt > 0 ? Math.max(0, (pick(last) - pick(first)) / dt) : 0;
  }
}

function inserted(s: Sample): number {
  return s.insertedRows ?? 0;
}

function definedOnly(sample: Sample): Partial<Sample> {
  return Object.fromEntries(Object.entries(sample).filter(([, v]) => v !== undefined)) as Partial<Sample>;
}

function push(history: number[], value: number, max: number): void {
  history.push(value);
  if (history.length > max) history.shift();
}
