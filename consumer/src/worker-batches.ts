/**
 * The batch half of the worker: messages go into their partition's cutter; each closed batch is
 * encoded once (ingest time fixed at the cut), journaled through an offset commit, delivered to
 * ClickHouse (with its dead letters), acknowledged in the partition's tracker and folded into the
 * next watermark commit. Memory is accounted in the shared byte budget from the moment a message
 * is taken until its batch is stored or abandoned.
 */
import type { Logger } from '../../common/src/log';
import type { BatchEncoder, MessageInput } from './encode/batch';
import type { CutBatch } from './delivery/batch-cutter';
import { BodyBuffers, BodyPool } from './delivery/body-pool';
import { PartitionGate, type ByteBudget, type Slots } from './delivery/flow-control';
import type { OffsetCommitter } from './delivery/offset-committer';
import type { PartitionState } from './delivery/partition-state';
import { AbortError, backoffMs } from '../../common/src/timing';
import type { BatchDelivery, BatchJob } from './sink/batch-delivery';
import { reasonLabel } from './sink/dead-letter';
import { errorReason } from './sink/retry';
import type { IntegrityStage, IntegrityTicket } from './integrity/integrity-stage';
import { batchToken } from './sink/token';
import type { WorkerMetrics } from './observability/metrics';
import { stageCpu } from '../../common/src/stage-cpu';

/**
 * Heap bytes one taken message holds besides its value bytes, counted in the byte budget with
 * them: the cutter's message object, the value's Buffer view and its array slot (185 bytes
 * measured on Node 26 with `--expose-gc`, rounded up). Without it a budget of short lines held a
 * third to twice its size in objects nobody counted.
 */
export const MESSAGE_OVERHEAD_BYTES = 192;

/** Budget bytes of `messages` messages holding `valueBytes` value bytes. */
export function heldBytes(valueBytes: number, messages: number): number {
  return valueBytes + messages * MESSAGE_OVERHEAD_BYTES;
}

/** Collaborators of the batch pipeline. */
export interface BatchPipelineDeps {
  encoder: BatchEncoder;
  delivery: BatchDelivery;
  committer: OffsetCommitter;
  budget: ByteBudget;
  slots: Slots;
  metrics: WorkerMetrics;
  log: Logger;
  tokenSalt: string;
  /** Tamper evidence, when the pipeline enables integrity. */
  integrity?: IntegrityStage;
}

/** Cuts, encodes, journals, delivers and acknowledges batches. */
export class BatchPipeline {
  private inflight = 0;
  private readonly bodies = new BodyBuffers(new BodyPool());
  private idleWaiters: Array<() => void> = [];
  private readonly gates = new WeakMap<PartitionState, PartitionGate>();

  /** Wires the collaborators; no I/O. */
  constructor(private readonly deps: BatchPipelineDeps) {}

  /** Batches cut and not yet finished, across partitions. */
  get inflightBatches(): number {
    return this.inflight;
  }

  /** Takes one message (already counted in lines) into its partition's cutter. */
  take(
    state: PartitionState,
    message: MessageInput & { offset: number; value: Buffer },
    lines: number,
    nowMs: number,
  ): void {
    this.deps.budget.add(message.value.length + MESSAGE_OVERHEAD_BYTES);
    for (const cut of state.cutter.add(message, lines, nowMs)) this.launch(state, cut);
  }

  /**
   * Folds the offsets Kafka showed without data (PartitionState.passOver) into the watermark and
   * commits it, once the partition holds no open or outstanding batch (never past uncut data).
   */
  foldPassedOver(state: PartitionState): void {
    if (!state.alive || state.cutter.pendingMessages() > 0 || state.cutter.replaying()) return;
    if (!state.tracker.skipTo(state.passedTo)) return;
    state.version++;
    this.deps.committer.flush(state).catch(() => undefined);
  }

  /** Closes batches whose delay is over (later while a backlog would fill them: BatchCutter.poll). */
  tick(states: Iterable<PartitionState>, nowMs: number): void {
    for (const s of states) {
      if (!s.alive) continue;
      const cut = s.cutter.poll(nowMs, s.backlog);
      if (cut) this.launch(s, cut);
    }
  }

  /**
   * Drain: closes the open batch of each partition now — except a partially re-read journaled
   * range, which is dropped (its journal entry stays, so the next owner re-cuts it whole).
   */
  closeOpen(states: Iterable<PartitionState>, nowMs: number): void {
    for (const s of states) {
      if (!s.alive) continue;
      const pending = s.cutter.pendingBytes();
      if (pending === 0) continue;
      if (s.cutter.replaying()) {
        this.deps.budget.release(heldBytes(pending, s.cutter.pendingMessages()));
        continue;
      }
      // The real clock: the cut fixes this batch's ingest time for good (it is journaled).
      const cut = s.cutter.flush(nowMs);
      if (cut) this.launch(s, cut);
    }
  }

  /** Resolves when no batch is in flight (or at once). */
  idle(): Promise<void> {
    if (this.inflight === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  /** The partition's gate to the shared insert slots (one per partition state). */
  private gateOf(state: PartitionState, slots: Slots): PartitionGate {
    let gate = this.gates.get(state);
    if (!gate) {
      gate = new PartitionGate(slots);
      this.gates.set(state, gate);
    }
    return gate;
  }

  private launch(state: PartitionState, cut: CutBatch): void {
    const { encoder, budget, metrics, tokenSalt } = this.deps;
    const started = process.cpuUsage();
    // The job's own bytes (retries resend exactly these): encoded into a pooled buffer sized for
    // the batch, which the job then takes over whole (body-pool.ts).
    this.bodies.prepare(encoder, cut.bytes);
    const encoded = encoder.encode(cut.messages, cut.ingestMs);
    const pooled = this.bodies.own(encoder, encoded.data, cut.bytes);
    const body = pooled.bytes;
    const ended = stageCpu.add('encode', started);
    metrics.encodeSeconds.inc((ended.user - started.user + ended.system - started.system) / 1e6);
    const job: BatchJob = {
      topic: state.topic,
      partition: state.partition,
      firstOffset: cut.firstOffset,
      lastOffset: cut.lastOffset,
      ingestMs: cut.ingestMs,
      token: batchToken(
        state.topic,
        state.partition,
        cut.firstOffset,
        cut.tokenLastOffset ?? cut.lastOffset,
        tokenSalt,
      ),
      body,
      rows: encoded.rows,
      format: encoder.format,
      rowStarts: encoded.rowStarts,
      messages: cut.messages,
      parseDeadLetters: encoded.deadLetters,
      partitionKeys: encoded.partitionKeys,
      blankLines: encoded.blankLines,
    };
    state.tracker.register(cut.firstOffset, cut.lastOffset, cut.ingestMs, cut.tokenLastOffset);
    state.version++;
    state.inflight++;
    this.inflight++;
    budget.add(body.length);
    metrics.batchesInFlight.set(this.inflight);
    metrics.bytesInFlight.set(budget.bytes);
    // The chain order is the cut order: take the ticket now, not when the INSERT returns.
    const ticket = this.deps.integrity?.reserve(state);
    const held = heldBytes(cut.bytes, cut.messages.length) + body.length;
    void this.run(state, job, held, encoded.lines, ticket).finally(pooled.release);
  }

  private async run(
    state: PartitionState,
    job: BatchJob,
    heldBytes: number,
    lines: number,
    ticket?: IntegrityTicket,
  ): Promise<void> {
    const { committer, delivery, slots, metrics, log, budget, integrity } = this.deps;
    try {
      // Journal first: once the cut is durable in Kafka, any later owner reproduces this batch.
      await committer.flush(state);
      for (let attempt = 0; ; attempt++) {
        try {
          const result = await delivery.deliver(job, state.abort.signal, this.gateOf(state, slots));
          // The link goes in before the ack: offsets never pass a stored batch without its link.
          if (integrity && ticket)
            await integrity.record(state, ticket, job, result.rejectedRows, result.deadLetterBody);
          state.tracker.ack(job.firstOffset);
          state.version++;
          if (!result.deduplicated) metrics.rowsInserted.inc(result.rowsInserted);
          metrics.batchRows.observe(lines);
          metrics.batches.inc({ outcome: result.deduplicated ? 'deduplicated' : 'stored' });
          for (const d of result.deadLetters) metrics.deadLetters.inc({ reason: reasonLabel(d.reason) });
          if (job.blankLines) metrics.blankLines.inc(job.blankLines);
          break;
        } catch (err) {
          if (err instanceof AbortError) throw err;
          // Delivery only throws AbortError by contract; anything else is a bug: log, wait, retry the same bytes.
          log.error('batch delivery failed unexpectedly; retrying', {
            partition: job.partition,
            first: job.firstOffset,
            err: errorReason(err),
          });
          state.tracker.fail(job.firstOffset);
          await new Promise((r) => setTimeout(r, backoffMs(attempt)));
          if (!state.alive) throw new AbortError();
        }
      }
      // Fold into the watermark; a failure here is retried by later commits of the partition.
      this.foldPassedOver(state);
      committer.flush(state).catch(() => undefined);
    } catch (err) {
      if (!(err instanceof AbortError))
        log.error('batch pipeline error', { partition: job.partition, err: errorReason(err) });
      metrics.batches.inc({ outcome: 'abandoned' });
    } finally {
      ticket?.release();
      budget.release(heldBytes);
      state.inflight--;
      this.inflight--;
      metrics.batchesInFlight.set(this.inflight);
      metrics.bytesInFlight.set(budget.bytes);
      if (this.inflight === 0) {
        const w = this.idleWaiters;
        this.idleWaiters = [];
        for (const f of w) f();
      }
    }
  }
}
