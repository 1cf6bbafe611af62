import { encodeJournal } from '../../../common/src/cut-journal';
import {
  sinkProblem,
  stallAfterMs,
  trackJournalStall,
  type CommitRecord,
  type StallMark,
} from './sink-health';

/** Partition 0 committed at 100 with the given journaled batches outstanding; partition 1 idle. */
function commits(batches: Array<[number, number, number]>): CommitRecord[] {
  const entries = batches.map(([firstOffset, lastOffset, ingestMs]) => ({
    firstOffset,
    lastOffset,
    ingestMs,
  }));
  return [
    { partition: 0, committed: 100, metadata: encodeJournal(entries) },
    { partition: 1, committed: 50, metadata: encodeJournal([]) },
  ];
}

describe('trackJournalStall', () => {
  it('reports nothing when no batch is journaled or the metadata is foreign', () => {
    expect(trackJournalStall(undefined, commits([]), 1000)).toEqual({ stalledMs: 0 });
    expect(
      trackJournalStall(undefined, [{ partition: 0, committed: 5, metadata: 'someone else' }], 1000),
    ).toEqual({ stalledMs: 0 });
  });

  it('measures how long the same batch stays outstanding on the operator clock', () => {
    let mark: StallMark | undefined;
    let stalled = 0;
    for (const t of [0, 5_000, 12_000]) {
      // Newer batches pile up behind the stuck one, as while ClickHouse refuses inserts.
      const batches: Array<[number, number, number]> = [[100, 199, 1]];
      if (t >= 5_000) batches.push([200, 299, 2]);
      ({ mark, stalledMs: stalled } = trackJournalStall(mark, commits(batches), t));
    }
    expect(mark).toEqual({ key: '0:100', since: 0 });
    expect(stalled).toBe(12_000);
  });

  it('starts over when the watched batch was stored, even if its successor is old', () => {
    const first = trackJournalStall(undefined, commits([[100, 199, 1]]), 0);
    // 100..199 stored: committed moves to 200, a batch re-cut with an old ingest time is outstanding.
    const next = trackJournalStall(
      first.mark,
      [
        {
          partition: 0,
          committed: 200,
          metadata: encodeJournal([{ firstOffset: 200, lastOffset: 250, ingestMs: 1 }]),
        },
      ],
      8_000,
    );
    expect(next).toEqual({ mark: { key: '0:200', since: 8_000 }, stalledMs: 0 });
  });

  it('ignores journal entries below the committed offset', () => {
    const r = trackJournalStall(
      undefined,
      [
        {
          partition: 3,
          committed: 500,
          metadata: encodeJournal([{ firstOffset: 100, lastOffset: 199, ingestMs: 1 }]),
        },
      ],
      0,
    );
    expect(r).toEqual({ stalledMs: 0 });
  });
});

describe('sinkProblem', () => {
  const healthy = { stalledMs: 0, stallAfterMs: stallAfterMs(1000), progressed: false };
  it('is healthy when every signal is', () => {
    expect(sinkProblem({ ...healthy, tableReady: 'True' })).toBeUndefined();
    expect(sinkProblem({ ...healthy, tableReady: 'Unknown' })).toBeUndefined();
  });
  it('names the signal that fired', () => {
    expect(sinkProblem({ ...healthy, pingError: 'connect ECONNREFUSED' })).toEqual({
      kind: 'clickhouse_unreachable',
      message: 'ClickHouse does not answer: connect ECONNREFUSED',
    });
    expect(sinkProblem({ ...healthy, tableReady: 'False', tableMessage: 'no such database' })?.kind).toBe(
      'table_not_ready',
    );
    const stalled = sinkProblem({ stalledMs: 10_000, stallAfterMs: 10_000, progressed: false });
    expect(stalled?.kind).toBe('inserts_stalled');
    expect(stalled?.message).toContain('waited 10s for its insert');
  });
  it('does not call a batch stalled while the group still commits progress', () => {
    expect(sinkProblem({ stalledMs: 60_000, stallAfterMs: 10_000, progressed: true })).toBeUndefined();
  });
  it('waits at least 10 s, or two poll intervals, before calling inserts stalled', () => {
    expect(stallAfterMs(1000)).toBe(10_000);
    expect(stallAfterMs(15_000)).toBe(30_000);
  });
});
