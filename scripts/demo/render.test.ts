import {
  bar,
  fit,
  formatBytes,
  formatClock,
  formatInt,
  renderLive,
  renderPlain,
  repaint,
  sortConditions,
  sparkline,
  visibleLength,
} from './render';
import type { DemoView } from './stats';

function view(overrides: Partial<DemoView> = {}): DemoView {
  return {
    phase: 'producing',
    elapsedMs: 23_400,
    durationMs: 60_000,
    targetRate: 20_000,
    linesPerMessage: 50,
    producedLines: 458_150,
    producedMessages: 9_163,
    producedBytes: 12.5 * 1024 * 1024,
    insertedRows: 420_331,
    deadLetters: 2_310,
    producedRate: 19_870,
    insertedRate: 18_200.4,
    producedHistory: [0, 10_000, 20_000, 20_000],
    insertedHistory: [0, 0, 5_000, 20_000],
    lagMessages: 1_245,
    statusLag: 1_100,
    replicasDesired: 3,
    replicasCurrent: 2,
    replicasReady: 2,
    maxReplicasSeen: 2,
    conditions: [
      { type: 'Scaling', status: 'True', reason: 'ScalingUp', message: 'lag 120000 > 100000 per replica' },
      { type: 'WorkersReady', status: 'False', reason: 'Progressing', message: '2 of 3 ready' },
      { type: 'Ready', status: 'True', reason: 'Ready', message: '' },
      { type: 'TopicReady', status: 'True', reason: 'TopicCreated', message: '' },
      { type: 'Audited', status: 'Unknown', reason: 'NotYet', message: '' },
      { type: 'TableReady', status: 'True', reason: 'TableCreated', message: '' },
    ],
    errors: [],
    ...overrides,
  };
}

describe('formatting', () => {
  it('groups thousands and rounds', () => {
    expect(formatInt(0)).toBe('0');
    expect(formatInt(999)).toBe('999');
    expect(formatInt(1234567.6)).toBe('1,234,568');
    expect(formatInt(-4200)).toBe('-4,200');
  });

  it('prints bytes with binary units and clocks as mm:ss', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(12.5 * 1024 * 1024)).toBe('12.5 MiB');
    expect(formatClock(0)).toBe('00:00');
    expect(formatClock(61_999)).toBe('01:01');
    expect(formatClock(3_723_000)).toBe('1:02:03');
  });

  it('draws sparklines scaled to the maximum and padded to width', () => {
    expect(sparkline([0, 2, 14, 8], 4)).toBe('▁▂█▅');
    expect(sparkline([0, 0], 4)).toBe('  ▁▁');
    expect(sparkline([1, 2, 3, 4, 5, 6, 7, 8], 3)).toBe('▆▇█');
  });

  it('draws bars clamped to 0..1', () => {
    expect(bar(0.5, 10)).toBe('█████░░░░░');
    expect(bar(2, 4)).toBe('████');
    expect(bar(-1, 4)).toBe('░░░░');
    expect(bar(NaN, 2)).toBe('░░');
  });

  it('cuts coloured text by visible width and closes the colour', () => {
    const text = '\x1b[32m✔ green\x1b[0m and more';
    expect(visibleLength(text)).toBe(16);
    expect(fit(text, 100)).toBe(text);
    const cut = fit(text, 4);
    expect(visibleLength(cut)).toBe(4);
    expect(cut).toBe('\x1b[32m✔ gr\x1b[0m');
  });

  it('orders the well-known conditions first', () => {
    expect(sortConditions(view().conditions).map((c) => c.type)).toEqual([
      'Ready',
      'TopicReady',
      'TableReady',
      'WorkersReady',
      'Scaling',
      'Audited',
    ]);
  });
});

describe('renderLive', () => {
  it('shows rates, totals, lag, replicas and every condition', () => {
    const lines = renderLive(view(), { width: 200, color: false, title: 'demo/firewall' });
    const text = lines.join('\n');
    expect(lines[0]).toBe(
      `logpipeline demo demo/firewall   producing 00:23 / 01:00 ${'█'.repeat(8)}${'░'.repeat(12)}`,
    );
    expect(text).toMatch(/produced\s+19,870 lines\/s .*▁▅██\s+target 20,000\/s/);
    expect(text).toMatch(/inserted\s+18,200 lines\/s .*▁▁▃█/);
    expect(text).toContain('produced 458,150 lines in 9,163 msgs (12.5 MiB)');
    expect(text).toContain('inserted 420,331 rows, dead-lettered 2,310 (0.50%)');
    expect(text).toMatch(/lag\s+1,245 msgs \(~62,250 lines\)/);
    expect(text).toContain('operator sees 1,100');
    expect(text).toContain('replicas   desired 3  current 2  ready 2   (max seen 2)');
    expect(text).toMatch(/✔ Ready\s+True\s+Ready/);
    expect(text).toMatch(/✘ WorkersReady\s+False\s+Progressing  2 of 3 ready/);
    expect(text).toMatch(/↻ Scaling\s+True\s+ScalingUp  lag 120000 > 100000 per replica/);
    expect(text).toMatch(/\? Audited\s+Unknown NotYet/);
    expect(text).not.toContain('\x1b');
  });

  it('keeps every line within the width, colours included', () => {
    for (const width of [40, 60, 80]) {
      const lines = renderLive(view({ errors: ['Kafka: connection refused '.repeat(5)] }), {
        width,
        color: true,
        title: 'demo/firewall',
      });
      expect(lines.every((l) => visibleLength(l) <= width)).toBe(true);
      expect(lines.some((l) => l.includes('\x1b[32m'))).toBe(true);
    }
  });

  it('says what is not known yet and what the phase means', () => {
    const text = renderLive(
      view({
        lagMessages: undefined,
        statusLag: undefined,
        conditions: [],
        replicasDesired: undefined,
        phase: 'draining',
      }),
      {
        width: 120,
        color: false,
        title: 't',
      },
    ).join('\n');
    expect(text).toContain('lag        (not known yet)');
    expect(text).toContain('(none reported yet)');
    expect(text).toContain('desired -');
    expect(text).toContain('waiting for the workers to store the rest');
  });
});

describe('renderPlain', () => {
  it('puts the essentials on one line', () => {
    expect(renderPlain(view())).toBe(
      '[00:23] producing produced=458150 (19870/s) inserted=420331 (18200/s) dead-lettered=2310 lag=1245msgs replicas=2/3 ready=True(Ready)',
    );
    expect(
      renderPlain(
        view({ lagMessages: undefined, statusLag: undefined, conditions: [], errors: ['ClickHouse: down'] }),
      ),
    ).toMatch(/lag=\?msgs .* ready=\? error="ClickHouse: down"$/);
  });
});

describe('repaint', () => {
  it('draws in place: cursor up over the previous frame, clear each line and below', () => {
    expect(repaint(0, ['a', 'b'])).toBe('a\x1b[K\nb\x1b[K\n\x1b[J');
    expect(repaint(3, ['x'])).toBe('\x1b[3A\rx\x1b[K\n\x1b[J');
  });
});
