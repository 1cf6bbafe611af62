import { AbortError } from '../../../common/src/timing';
import { KafkaJSProtocolError } from 'kafkajs';
import { generationErrorType, OffsetCommitter } from './offset-committer';
import type { PartitionCommit } from './partition-state';
import { PartitionState } from './partition-state';

const limits = { maxRows: 10, maxBytes: 1000, maxDelayMs: 100 };

function loaded(partition: number, committed = 0): PartitionState {
  const s = new PartitionState('t', partition, limits);
  s.load(committed, []);
  return s;
}

describe('OffsetCommitter', () => {
  it('journals a cut batch before it is acknowledged and commits the watermark after', async () => {
    const sent: PartitionCommit[][] = [];
    const c = new OffsetCommitter(async (o) => void sent.push(o));
    c.unfence();
    const s = loaded(0, 100);
    s.tracker.register(100, 149, 1_700_000_000_000);
    s.version++;
    await c.flush(s);
    expect(sent).toEqual([
      [{ topic: 't', partition: 0, offset: '100', metadata: 'lp1;100-149@1700000000000' }],
    ]);
    s.tracker.ack(100);
    s.version++;
    await c.flush(s);
    expect(sent[1]).toEqual([{ topic: 't', partition: 0, offset: '150', metadata: 'lp1;' }]);
    // Nothing changed: no new commit.
    await c.flush(s);
    expect(sent).toHaveLength(2);
  });

  it('coalesces concurrent flushes of several partitions into one commit', async () => {
    const sent: PartitionCommit[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const c = new OffsetCommitter(async (o) => {
      sent.push(o);
      if (sent.length === 1) await gate;
    });
    c.unfence();
    const [a, b, d] = [loaded(0), loaded(1), loaded(2)];
    for (const s of [a, b, d]) s.version++;
    const first = c.flush(a);
    const rest = [c.flush(b), c.flush(d)];
    release();
    await Promise.all([first, ...rest]);
    expect(sent).toHaveLength(2);
    expect(sent[1].map((x) => x.partition)).toEqual([1, 2]);
  });

  it('sends nothing while fenced and drops revoked partitions', async () => {
    const sent: PartitionCommit[][] = [];
    const c = new OffsetCommitter(async (o) => void sent.push(o));
    const s = loaded(0);
    s.version++;
    const pending = c.flush(s);
    await new Promise((r) => setTimeout(r, 20));
    expect(sent).toHaveLength(0);
    s.kill();
    c.unfence();
    await expect(pending).rejects.toBeInstanceOf(AbortError);
    expect(sent).toHaveLength(0);
    await expect(c.flush(s)).rejects.toBeInstanceOf(AbortError);
  });

  it('fences itself on a generation error and retries after the next unfence', async () => {
    let fail = true;
    const sent: PartitionCommit[][] = [];
    const c = new OffsetCommitter(async (o) => {
      if (fail) throw Object.assign(new Error('rebalance'), { type: 'REBALANCE_IN_PROGRESS' });
      sent.push(o);
    });
    c.unfence();
    const s = loaded(3);
    s.version++;
    const pending = c.flush(s);
    await new Promise((r) => setTimeout(r, 20));
    expect(sent).toHaveLength(0);
    fail = false;
    c.unfence();
    await pending;
    expect(sent).toHaveLength(1);
  });

  it('retries other failures with backoff', async () => {
    let attempts = 0;
    const c = new OffsetCommitter(async () => {
      if (++attempts < 3) throw new Error('coordinator moved');
    });
    c.unfence();
    const s = loaded(0);
    s.version++;
    await c.flush(s);
    expect(attempts).toBe(3);
  });

  it('keeps journaled ranges inherited from the previous owner in its commits until they are re-cut', async () => {
    const sent: PartitionCommit[][] = [];
    const c = new OffsetCommitter(async (o) => void sent.push(o));
    c.unfence();
    const s = new PartitionState('t', 0, limits);
    s.load(300, [
      { firstOffset: 300, lastOffset: 309, ingestMs: 7 },
      { firstOffset: 310, lastOffset: 319, ingestMs: 8 },
    ]);
    const m = (offset: number) => ({ topic: 't', partition: 0, offset, value: Buffer.from('x') });
    let cut = [] as ReturnType<typeof s.cutter.add>;
    for (let o = 300; o <= 309; o++) cut = s.cutter.add(m(o), 1, 0);
    expect(cut.map((b) => [b.firstOffset, b.lastOffset, b.ingestMs])).toEqual([[300, 309, 7]]);
    s.tracker.register(300, 309, 7);
    s.tracker.ack(300);
    s.version++;
    await c.flush(s);
    // The batch is stored, but 310-319 (maybe inserted by the previous owner) is still journaled.
    expect(sent[0]).toEqual([{ topic: 't', partition: 0, offset: '310', metadata: 'lp1;310-319@8' }]);
  });
});

describe('OffsetCommitter isolation (issue 12)', () => {
  it("one partition's refused commit never holds another partition's", async () => {
    const sent: number[][] = [];
    const c = new OffsetCommitter(async (o) => {
      sent.push(o.map((x) => x.partition));
      if (o.some((x) => x.partition === 1)) throw new Error('OFFSET_METADATA_TOO_LARGE');
    });
    c.unfence();
    const [a, b] = [loaded(0), loaded(1)];
    a.version++;
    b.version++;
    const bad = c.flush(b);
    bad.catch(() => undefined);
    await c.flush(a);
    expect(a.committedVersion).toBe(a.version);
    expect(b.committedVersion).toBe(0);
    expect(sent.some((x) => x.length === 1 && x[0] === 0)).toBe(true);
    b.kill();
    c.reap();
    await expect(bad).rejects.toBeInstanceOf(AbortError);
  });

  it('a journal of the worst-case outstanding batches still commits (bounded by construction)', async () => {
    const sent: PartitionCommit[][] = [];
    const c = new OffsetCommitter(async (o) => void sent.push(o));
    c.unfence();
    const s = loaded(0, 2 ** 52);
    for (let i = 0; i < 200; i++)
      s.tracker.register(2 ** 52 + i * 10, 2 ** 52 + i * 10 + 9, 9_999_999_999_999);
    s.version++;
    await c.flush(s);
    expect(sent[0][0].metadata.length).toBeLessThanOrEqual(4096);
  });
});

/** The error consumer.commitOffsets really rejects with: kafkajs's own retrier around a protocol error. */
async function kafkajsCommitError(code: number): Promise<unknown> {
  /* eslint-disable @typescript-eslint/no-require-imports -- kafkajs exports neither its retrier nor the code table */
  const retry = require('kafkajs/src/retry') as (o: object) => (fn: () => Promise<void>) => Promise<void>;
  const { createErrorFromCode } = require('kafkajs/src/protocol/error') as {
    createErrorFromCode(code: number): Error & { type: string; retriable: boolean };
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
  return retry({ retries: 1, initialRetryTime: 1 })(async () => {
    throw new KafkaJSProtocolError(createErrorFromCode(code));
  }).then(
    () => undefined,
    (err: unknown) => err,
  );
}

describe('OffsetCommitter across a rebalance (duplicates under load)', () => {
  it('recognises the generation errors kafkajs actually rejects commits with (wrapped, type on the cause)', async () => {
    const unknownMember = await kafkajsCommitError(25);
    // The wrapper has no type of its own: a check of err.type alone never fenced in production.
    expect((unknownMember as { type?: string }).type).toBeUndefined();
    expect(generationErrorType(unknownMember)).toBe('UNKNOWN_MEMBER_ID');
    expect(generationErrorType(await kafkajsCommitError(22))).toBe('ILLEGAL_GENERATION');
    expect(generationErrorType(await kafkajsCommitError(27))).toBe('REBALANCE_IN_PROGRESS');
    expect(generationErrorType(new Error('Request timed out'))).toBeUndefined();
  });

  it('fences on a kafkajs-wrapped UNKNOWN_MEMBER_ID instead of retrying partition by partition', async () => {
    const wrapped = await kafkajsCommitError(25);
    const sent: number[][] = [];
    let fail = true;
    const c = new OffsetCommitter(async (o) => {
      sent.push(o.map((x) => x.partition));
      if (fail) throw wrapped;
    });
    const [a, b] = [loaded(0), loaded(1)];
    a.version++;
    b.version++;
    const pending = [c.flush(a), c.flush(b)];
    c.unfence();
    await new Promise((r) => setTimeout(r, 50));
    expect(sent).toEqual([[0, 1]]);
    fail = false;
    c.unfence();
    await Promise.all(pending);
    expect(sent).toEqual([
      [0, 1],
      [0, 1],
    ]);
  });

  it('never sends the commit of a partition revoked while a partition-by-partition retry awaited', async () => {
    // Seen in worker-rebalance under load: the joint commit failed, the per-partition retry was
    // awaiting partition 1 when the worker joined the next generation (partition 5 went to another
    // worker, which loaded its journal); the loop then sent partition 5's dead state, kafkajs
    // stamped it with the new generation, the broker accepted it and the next owner re-cut the
    // partition from that stale journal: same rows under other tokens, stored twice.
    const sent: Array<{ partitions: number[]; alive: boolean[] }> = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let states: PartitionState[] = [];
    const c = new OffsetCommitter(async (o) => {
      sent.push({
        partitions: o.map((x) => x.partition),
        alive: o.map((x) => states.find((s) => s.partition === x.partition)!.alive),
      });
      if (sent.length === 1) throw new Error('Request timed out');
      if (sent.length === 2) {
        await gate;
        throw new Error('Request timed out');
      }
    });
    states = [loaded(1), loaded(5)];
    for (const s of states) s.version++;
    // Both dirty before the first send (the committer starts fenced): one joint commit.
    const pending = states.map((s) => c.flush(s));
    pending.forEach((p) => p.catch(() => undefined));
    c.unfence();
    await new Promise((r) => setTimeout(r, 20));
    expect(sent.map((x) => x.partitions)).toEqual([[1, 5], [1]]);
    // The next assignment: every state of the old one dies (worker.onAssignment), sending resumes.
    for (const s of states) s.kill();
    c.reap();
    c.unfence();
    release();
    for (const p of pending) await expect(p).rejects.toBeInstanceOf(AbortError);
    await new Promise((r) => setTimeout(r, 300));
    expect(sent.filter((x) => x.alive.some((alive) => !alive))).toEqual([]);
    expect(sent.map((x) => x.partitions)).toEqual([[1, 5], [1]]);
  });

  it('a generation error of the previous round does not fence the new assignment', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const wrapped = await kafkajsCommitError(25);
    let calls = 0;
    const c = new OffsetCommitter(async () => {
      if (++calls === 1) {
        await gate;
        throw wrapped;
      }
    });
    c.unfence();
    const old = loaded(0);
    old.version++;
    const lost = c.flush(old);
    lost.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 20));
    old.kill();
    c.reap();
    c.unfence();
    const fresh = loaded(0);
    fresh.version++;
    const next = c.flush(fresh);
    release();
    await expect(lost).rejects.toBeInstanceOf(AbortError);
    await next;
    expect(fresh.committedVersion).toBe(fresh.version);
  });
});
