import { AbortError } from '../../../common/src/timing';
import { OffsetCommitter } from './offset-committer';
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
