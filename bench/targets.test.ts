import { e2eTargets, issue15Targets, targetsBlock } from './targets';

/** The shape bench/e2e.ts prints, with the fourth round's quiet-machine medians. */
function e2eDoc(over: { packed?: number; single?: number; rss?: number } = {}) {
  const mode = (steady: number, vsPeer: number, saving: number, rss: number[]) => ({
    worker: {
      RowBinary: {
        median: { steadyLinesPerCpuSecond: steady, peakRssMiB: Math.max(...rss) },
        vsPeer: { steadyLinesPerCpuSecond: vsPeer },
        runs: rss.map((peakRssMiB) => ({ peakRssMiB })),
      },
      TabSeparated: { median: { peakRssMiB: 300 }, runs: [{ peakRssMiB: 300 }] },
    },
    formatComparison: { totalCpuPerMillionLines_RowBinary_vs_TabSeparated: saving },
    peerKafkaEngine: { median: {}, runs: [{ peakRssMiB: 4096 }] },
  });
  return {
    packed100: mode(over.packed ?? 195_000, 2.21, -0.41, [436, over.rss ?? 420]),
    single: mode(over.single ?? 102_000, 1.28, -0.38, [289]),
  };
}

describe('issue 15 targets', () => {
  it('reads every e2e target with its value and met / not met', () => {
    const t = e2eTargets(e2eDoc());
    expect(t.map((x) => [x.value, x.met])).toEqual([
      [195_000, false],
      [2.21, false],
      [102_000, false],
      [1.28, false],
      [-0.41, true],
      [-0.38, true],
      [436, true],
    ]);
    expect(t[0].source).toBe('packed100.worker.RowBinary.median.steadyLinesPerCpuSecond');
  });

  it('takes the largest worker RSS of every run (never the peer), including integrity runs', () => {
    const doc = {
      ...e2eDoc({ rss: 500 }),
      packed100Integrity: {
        on: { median: { peakRssMiB: 1 }, runs: [{ peakRssMiB: 520 }] },
        off: { runs: [] },
      },
    };
    const rss = e2eTargets(doc).find((x) => x.unit === 'MiB')!;
    expect([rss.value, rss.met]).toEqual([520, false]);
  });

  it('meets a target at its bound and leaves what the run did not measure as null', () => {
    const t = e2eTargets(e2eDoc({ packed: 250_000 }));
    expect(t[0].met).toBe(true);
    const none = targetsBlock(e2eTargets(undefined));
    expect([none.met, none.notMet, none.notMeasured]).toEqual([0, 0, 7]);
  });

  it("puts the e2e and parse targets of `npm run bench` in one block, sources under each benchmark's name", () => {
    const block = issue15Targets({
      e2e: e2eDoc(),
      parse: { linesPerCpuSecond: 610_000 },
      'parse-json': { linesPerCpuSecond: 290_000 },
    });
    expect([block.met, block.notMet, block.notMeasured]).toEqual([4, 5, 1]);
    expect(block.targets[0].source).toBe('e2e.packed100.worker.RowBinary.median.steadyLinesPerCpuSecond');
    expect(block.targets.slice(-3).map((x) => [x.source, x.met])).toEqual([
      ['parse.linesPerCpuSecond', true],
      ['parse-paloalto.linesPerCpuSecond', null],
      ['parse-json.linesPerCpuSecond', false],
    ]);
  });
});
