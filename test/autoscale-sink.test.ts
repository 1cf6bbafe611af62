/**
 * Closed loop, the sink as the bottleneck (KEDA #7092): no scale-up while ClickHouse cannot take
 * the inserts, with the Scaling condition saying why, and scaling resumes once it can.
 *
 * 1. Only the WORKERS lose ClickHouse (they reach it through a TCP proxy the test cuts; the
 *    operator's own ping and the Table part still succeed): the hold comes from the workers' report,
 *    the journaled batch that stays outstanding in their offset-commit metadata.
 * 2. ClickHouse itself stops: the operator's ping fails (and TableReady turns False).
 */
import type { Counter } from 'prom-client';
import { restartClickHouse, stopClickHouse } from './env/clickhouse';
import { isAlive } from './env/process';
import { readTestBed, writeTestBed } from './env/testbed';
import {
  createAutoscaledPipeline,
  produce,
  Recorder,
  startLoop,
  stopLoop,
  storedRows,
  TcpProxy,
  type Loop,
  type Sample,
} from './autoscale-harness';

// The waits below add up to more than 300 s; on a loaded machine each may take a good part of its
// bound, so the test's own limit must cover their sum (each wait still fails on its own condition).
jest.setTimeout(720_000);

const LAG_PER_REPLICA = 1000;
const proxy = new TcpProxy(new URL(readTestBed().clickhouse!.url));
let loop: Loop | undefined;

const settings = {
  minReplicas: 1,
  maxReplicas: 3,
  lagPerReplica: LAG_PER_REPLICA,
  scaleDownStabilization: '30s',
};

beforeAll(async () => {
  await proxy.open();
  loop = await startLoop('as-sink', { LP_CLICKHOUSE_URL: `http://127.0.0.1:${proxy.port}` });
  await Promise.all([
    createAutoscaledPipeline(loop, 'stall', settings),
    createAutoscaledPipeline(loop, 'outage', settings),
  ]);
});

afterAll(async () => {
  // A failed outage test must not leave ClickHouse down for the cleanup (it drops the tables).
  const ch = readTestBed().clickhouse!;
  if (ch.process && !isAlive(ch.process.pid))
    writeTestBed({ ...readTestBed(), clickhouse: await restartClickHouse(ch) });
  await proxy.open().catch(() => undefined);
  await stopLoop(loop);
  await proxy.cut();
});

async function holds(reason: string, name: string): Promise<number> {
  const metric = (
    await (loop!.registry.getSingleMetric('logpipeline_autoscaler_holds_total') as Counter).get()
  ).values;
  return metric
    .filter((v) => v.labels.reason === reason && v.labels.name === name)
    .reduce((s, v) => s + v.value, 0);
}

const held = (s: Sample) => s.scaling?.reason === 'HoldSinkUnhealthy';

test('workers that cannot insert hold scale-ups through their offset-commit journal; scaling resumes when they can', async () => {
  const l = loop!;
  const rec = new Recorder(l, 'stall');
  try {
    await produce(l, 'stall', 1_000, 41);
    await rec.until(
      'first lines stored',
      (s) => s.lag?.total === 0 && (s.lag?.ratePerSecond ?? 0) > 0,
      60_000,
    );

    await proxy.cut();
    // A few lines: a batch gets journaled and its insert keeps failing; the lag stays under the target.
    await produce(l, 'stall', 300, 42);
    // Wait for the workers' report itself: on a loaded machine a slow answer to the operator's own
    // ping can also hold for a moment, which is not what this step proves.
    const hold = await rec.until(
      'hold from the workers',
      (s) => held(s) && /a journaled batch has waited/.test(s.scaling!.message),
      90_000,
    );
    expect(hold.scaling!.status).toBe('False');
    expect(hold.scaling!.message).toMatch(/a journaled batch has waited \d+s for its insert/);
    // The operator itself still reaches ClickHouse: this hold came from the workers' report alone.
    expect(hold.scaling!.message).not.toContain('does not answer');

    // A peak arrives while the sink is down: far above the target, and still no scale-up.
    await produce(l, 'stall', 20_000, 43);
    const peak = await rec.until(
      'lag above 3 x target',
      (s) => (s.lag?.smoothed ?? 0) > 3 * LAG_PER_REPLICA && held(s),
      60_000,
    );
    expect(peak.scaling!.message).toMatch(/^wants [23] workers, holding at 1: /);
    await new Promise((r) => setTimeout(r, 5_000));
    const during = rec.samples.filter((s) => s.t >= hold.t);
    expect(Math.max(...during.map((s) => s.replicas))).toBe(1);
    expect(await holds('inserts_stalled', 'stall')).toBeGreaterThan(0);

    await proxy.open();
    // Traffic goes on: the backlog is still well above the target when the hold is released.
    await produce(l, 'stall', 60_000, 45);
    // The hold is released; on a fast machine one recovered worker may drain the backlog before the
    // next poll, which is a correct outcome too (scale-up on lag itself is proven by the burst test).
    const resumed = await rec.until(
      'hold released after the workers recovered',
      (s) => s.t > peak.t && !held(s) && (s.replicas > 1 || s.lag?.total === 0),
      90_000,
    );
    expect(resumed.replicas).toBeLessThanOrEqual(3);
    await rec.until('drained', (s) => s.t >= resumed.t && s.lag?.total === 0, 180_000);
    expect(await storedRows(l, 'stall')).toEqual({ rows: 81_300, distinct: 81_300 });
  } finally {
    await rec.stop();
    if (process.env.LP_AUTOSCALE_DEBUG) console.log(rec.dump(rec.samples[0]?.t ?? 0));
  }
});

test('a stopped ClickHouse holds scale-ups (ping, TableReady) and scaling resumes after its restart', async () => {
  const l = loop!;
  const rec = new Recorder(l, 'outage');
  const bed = readTestBed();
  try {
    await stopClickHouse(bed.clickhouse!);
    // A ping or Table check that was in flight while the server shut down fails with a timeout or a
    // reset, not ECONNREFUSED (the race that failed this test on a loaded machine): wait for the
    // hold that reports the stopped server, from whichever sees it first, the operator's ping or the
    // Table part (TableReady False).
    const hold = await rec.until(
      'hold on the ping (connection refused)',
      (s) => held(s) && /ECONNREFUSED/.test(s.scaling!.message),
      60_000,
    );
    expect(hold.scaling!.message).toMatch(
      /^holding scale-ups at 1 workers: (ClickHouse does not answer|TableReady is False): .*ECONNREFUSED/,
    );
    await produce(l, 'outage', 20_000, 44);
    const peak = await rec.until(
      'lag above 3 x target',
      (s) => (s.lag?.smoothed ?? 0) > 3 * LAG_PER_REPLICA && held(s),
      60_000,
    );
    expect(peak.scaling!.message).toMatch(
      /^wants [23] workers, holding at 1: (ClickHouse does not answer|TableReady is False)/,
    );
    await new Promise((r) => setTimeout(r, 5_000));
    expect(Math.max(...rec.samples.filter((s) => s.t >= hold.t).map((s) => s.replicas))).toBe(1);
    expect(await holds('clickhouse_unreachable', 'outage')).toBeGreaterThan(0);

    const restarted = await restartClickHouse(bed.clickhouse!);
    writeTestBed({ ...readTestBed(), clickhouse: restarted });
    await produce(l, 'outage', 20_000, 46);
    // Released and scaled up on the backlog; a single recovered worker that drains it before the next
    // poll is a correct outcome too (scale-up on lag itself is proven by the burst test).
    const resumed = await rec.until(
      'hold released after the restart',
      (s) => s.t > peak.t && !held(s) && (s.replicas > 1 || s.lag?.total === 0),
      120_000,
    );
    expect(resumed.scaling!.reason).not.toBe('HoldSinkUnhealthy');
    await rec.until('drained', (s) => s.t >= resumed.t && s.lag?.total === 0, 180_000);
    expect(await storedRows(l, 'outage')).toEqual({ rows: 40_000, distinct: 40_000 });
  } finally {
    await rec.stop();
    if (process.env.LP_AUTOSCALE_DEBUG) console.log(rec.dump(rec.samples[0]?.t ?? 0));
  }
});
