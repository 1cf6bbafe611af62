import { StatsTracker } from './stats';

const settings = { durationMs: 60_000, targetRate: 1000, linesPerMessage: 10, historyLength: 3 };
const base = { producedMessages: 0, producedBytes: 0 };

describe('StatsTracker', () => {
  it('computes rates over the last two seconds of samples', () => {
    const t = new StatsTracker(0, settings);
    t.add({ atMs: 0, producedLines: 0, insertedRows: 0, deadLetters: 0, ...base });
    t.add({ atMs: 1000, producedLines: 1000, insertedRows: 500, deadLetters: 0, ...base });
    t.add({ atMs: 2000, producedLines: 2000, insertedRows: 1500, deadLetters: 10, ...base });
    let v = t.view('producing', 2000);
    expect(v.producedRate).toBe(1000);
    expect(v.insertedRate).toBe(750);
    // The window slides: the sample at 0 ms drops out once a sample 2 s after the next one arrives.
    t.add({ atMs: 3000, producedLines: 5000, insertedRows: 2500, deadLetters: 10, ...base });
    v = t.view('producing', 3000);
    expect(v.producedRate).toBe(2000);
    expect(v.insertedRate).toBe(1000);
    expect(v.elapsedMs).toBe(3000);
  });

  it('keeps the last known value of a source that failed this time', () => {
    const t = new StatsTracker(0, settings);
    t.add({
      atMs: 0,
      producedLines: 0,
      insertedRows: 10,
      deadLetters: 2,
      lagMessages: 5,
      replicasCurrent: 2,
      ...base,
    });
    t.add({ atMs: 500, producedLines: 100, errors: ['ClickHouse: timeout'], ...base });
    const v = t.view('producing', 500);
    expect(v.insertedRows).toBe(10);
    expect(v.deadLetters).toBe(2);
    expect(v.lagMessages).toBe(5);
    expect(v.errors).toEqual(['ClickHouse: timeout']);
    t.add({ atMs: 1000, producedLines: 200, insertedRows: 20, ...base });
    expect(t.view('producing', 1000).errors).toEqual([]);
  });

  it('keeps bounded histories for the sparklines and the largest replica count seen', () => {
    const t = new StatsTracker(0, settings);
    for (let i = 0; i <= 5; i++)
      t.add({
        atMs: i * 1000,
        producedLines: i * 100,
        insertedRows: 0,
        replicasCurrent: [1, 3, 2, 1, 1, 1][i],
        ...base,
      });
    const v = t.view('draining', 5000);
    expect(v.producedHistory).toEqual([100, 100, 100]);
    expect(v.insertedHistory).toEqual([0, 0, 0]);
    expect(v.maxReplicasSeen).toBe(3);
    expect(v.phase).toBe('draining');
  });

  it('reports zero rates until two samples exist', () => {
    const t = new StatsTracker(0, settings);
    expect(t.view('producing', 0).producedRate).toBe(0);
    t.add({ atMs: 0, producedLines: 50, ...base });
    expect(t.view('producing', 0).producedRate).toBe(0);
  });
});
