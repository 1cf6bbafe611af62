import { ClickHouseCatalogue } from '../apply/clickhouse-catalogue';
import { requestApiName } from '../apply/kafka-attribution';
import {
  countClickHouseRequest,
  countKafkaRequest,
  countKubeRequest,
  withRequestScope,
} from '../apply/request-counts';
import { FakeClock } from '../controller/clock';
import { WorkQueue } from '../controller/workqueue';
import { OperatorMetrics } from './metrics';

/** The value of one sample line of a metric in Prometheus text. */
function sample(text: string, line: string): number | undefined {
  const hit = text.split('\n').find((l) => l.startsWith(`${line} `));
  return hit === undefined ? undefined : Number(hit.slice(hit.lastIndexOf(' ') + 1));
}

describe('RequestScope', () => {
  it('attributes requests to the reconcile that sent them, concurrent reconciles apart', async () => {
    const tick = () => new Promise((r) => setTimeout(r, 1));
    const [a, b] = await Promise.all([
      withRequestScope(async () => {
        countKubeRequest('GET', '/api/v1/namespaces/a/secrets/ch');
        await tick();
        countClickHouseRequest('SELECT name FROM system.tables');
        countKafkaRequest('Metadata', 2);
        return 'a';
      }),
      withRequestScope(async () => {
        await tick();
        countKubeRequest('PATCH', '/apis/apps/v1/namespaces/a/deployments/w');
        countKafkaRequest('OffsetFetch', 1, false); // counted where the sender is unknown: not attributed
        throw new Error('boom');
      }),
    ]);
    expect(a.ok && a.value).toBe('a');
    expect(Object.fromEntries(a.scope.counts.kube)).toEqual({ 'get secrets': 1 });
    expect(Object.fromEntries(a.scope.counts.clickhouse)).toEqual({ 'SELECT system.tables': 1 });
    expect(Object.fromEntries(a.scope.counts.kafka)).toEqual({ Metadata: 2 });
    expect(b.ok).toBe(false);
    expect(Object.fromEntries(b.scope.counts.kube)).toEqual({ 'patch deployments': 1 });
    expect(b.scope.total('kafka')).toBe(0);
  });

  it('ignores requests made after the reconcile ended (a timer it started lives on)', async () => {
    let later: () => void = () => undefined;
    const { scope } = await withRequestScope(async () => {
      later = () => countKubeRequest('GET', '/api/v1/namespaces/a/pods');
    });
    later();
    expect(scope.total('kube')).toBe(0);
  });
});

describe('requestApiName', () => {
  it('reads the API key of an encoded Kafka request and never names unknown bytes', () => {
    const req = (key: number) => {
      const b = Buffer.alloc(12);
      b.writeInt32BE(8, 0);
      b.writeInt16BE(key, 4);
      return b;
    };
    expect(requestApiName(req(3))).toBe('Metadata');
    expect(requestApiName(req(9))).toBe('OffsetFetch');
    expect(requestApiName(req(0x6e2c))).toBe('Other');
    expect(requestApiName(Buffer.alloc(3))).toBeUndefined();
    expect(requestApiName('text')).toBeUndefined();
  });
});

describe('FleetMetrics', () => {
  it('exports per-reconcile request histograms, zeros included per system', async () => {
    const m = new OperatorMetrics();
    const steady = await withRequestScope(async () => undefined);
    const creation = await withRequestScope(async () => {
      countKubeRequest('PATCH', '/apis/apps/v1/namespaces/a/deployments/w');
      countKubeRequest('PATCH', '/apis/apps/v1/namespaces/a/configmaps/w');
      countKubeRequest('PATCH', '/apis/apps/v1/namespaces/a/deployments/w2');
      countClickHouseRequest('CREATE TABLE db.t (a UInt8) ENGINE = Memory');
    });
    m.observeReconcileRequests(steady.scope);
    m.observeReconcileRequests(creation.scope);
    const text = await m.registry.metrics();
    const kube = 'logpipeline_operator_reconcile_requests_bucket{le="0",system="kube"}';
    expect(sample(text, kube)).toBe(1);
    expect(sample(text, 'logpipeline_operator_reconcile_requests_count{system="kube"}')).toBe(2);
    expect(sample(text, 'logpipeline_operator_reconcile_requests_sum{system="kube"}')).toBe(3);
    expect(sample(text, 'logpipeline_operator_reconcile_requests_sum{system="kafka"}')).toBe(0);
    expect(
      sample(text, 'logpipeline_operator_reconcile_kube_requests_sum{verb="patch",resource="deployments"}'),
    ).toBe(2);
    expect(
      sample(text, 'logpipeline_operator_reconcile_kube_requests_count{verb="patch",resource="deployments"}'),
    ).toBe(1);
    expect(sample(text, 'logpipeline_operator_reconcile_clickhouse_requests_sum{kind="CREATE TABLE"}')).toBe(
      1,
    );
  });

  it('exports queue lanes, in-flight keys and the wait of each key by lane', async () => {
    const clock = new FakeClock();
    const m = new OperatorMetrics();
    const known = new Set(['old']);
    const q = new WorkQueue({
      clock,
      laneOf: (k) => (known.has(k) ? 'fast' : 'bulk'),
      onHandOut: (ms, lane) => m.fleet.observeQueueWait(lane, ms / 1000),
    });
    m.setSources({
      queueDepth: () => q.len(),
      queueWaiting: () => q.waitingLen(),
      isLeader: () => true,
      informerErrors: () => ({}),
      queue: { lanes: () => q.laneLens(), inFlight: () => q.processingLen() },
    });
    q.add('new1');
    q.add('new2');
    q.add('old');
    clock.advance(2_000);
    expect(await q.get()).toBe('old');
    let text = await m.registry.metrics();
    expect(sample(text, 'logpipeline_operator_queue_lane_depth{lane="bulk"}')).toBe(2);
    expect(sample(text, 'logpipeline_operator_queue_lane_depth{lane="fast"}')).toBe(0);
    expect(sample(text, 'logpipeline_operator_queue_in_flight')).toBe(1);
    expect(sample(text, 'logpipeline_operator_queue_wait_seconds_sum{lane="fast"}')).toBe(2);
    clock.advance(1_000);
    expect(await q.get()).toBe('new1');
    text = await m.registry.metrics();
    expect(sample(text, 'logpipeline_operator_queue_wait_seconds_sum{lane="bulk"}')).toBe(3);
    expect(sample(text, 'logpipeline_operator_queue_wait_seconds_bucket{le="1",lane="bulk"}')).toBe(0);
  });

  it('exports what the catalogues did: reads by result, rounds and invalidations', async () => {
    const m = new OperatorMetrics();
    const before = await m.registry.metrics();
    const base = (line: string) => sample(before, line) ?? 0;
    const cat = new ClickHouseCatalogue(async () => [], { gatherMs: 0 });
    await cat.snapshot(['db']);
    await cat.snapshot(['db']);
    cat.markDirty();
    await cat.snapshot(['db']);
    const text = await m.registry.metrics();
    const delta = (line: string) => (sample(text, line) ?? 0) - base(line);
    expect(delta('logpipeline_operator_clickhouse_catalogue_reads_total{result="round"}')).toBe(2);
    expect(delta('logpipeline_operator_clickhouse_catalogue_reads_total{result="fresh"}')).toBe(1);
    expect(delta('logpipeline_operator_clickhouse_catalogue_rounds_total')).toBe(2);
    expect(delta('logpipeline_operator_clickhouse_catalogue_invalidations_total')).toBe(1);
  });
});
