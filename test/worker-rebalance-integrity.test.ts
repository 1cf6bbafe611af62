/**
 * The rebalance race of issue 13, end to end: two real worker processes share a topic whose lines
 * keep flowing while the second one joins; checkpoints are timestamped by a TSA that answers only
 * after 3 s, so the first worker's revocation work (a final checkpoint) is still running when its
 * kept partition's new state restores its chain head. No batch may be left without a link: the
 * workers log none, every stored row is covered by a link, and `verify` finds nothing — for the
 * data table and for the dead-letter table, whose rows (every 40th line is garbage) have a chain
 * of their own.
 */
import fs from 'node:fs';
import { resolveSpec } from '../operator/src/api/defaults';
import { generateSampleLines } from './fixtures/samples';
import { readTestBed } from './env/testbed';
import { freePort } from './env/process';
import { startTsa, type TsaServer } from './env/tsa';
import {
  createIntegrityTables,
  createTopics,
  integrityPipeline,
  integrityWorkerConfig,
  scalar as scalarOf,
  signingKeys,
  spawnSigningWorker,
  verifyTable,
} from './integrity-support';
import {
  chClient,
  pollUntil,
  produceLines,
  stopWorker,
  testProducer,
  workerGet,
  type WorkerProcess,
} from './worker-support';

const bed = readTestBed();
const ch = chClient(bed);
const id = `rebal_${Date.now().toString(36)}`;
let tsa: TsaServer;
let signing: ReturnType<typeof signingKeys>;

const pipeline = (tsaUrl: string) =>
  integrityPipeline(bed, id, { partitions: 2, batch: { maxRows: 500, maxDelay: '100ms' }, tsaUrl });
const scalar = (query: string) => scalarOf(ch, query);

beforeAll(async () => {
  tsa = await startTsa({ delayMs: 3_000 });
  signing = signingKeys('rebal-');
}, 60_000);

afterAll(async () => {
  if (!process.env.KEEP_DB) await ch.command({ query: `DROP DATABASE IF EXISTS \`${id}\`` });
  await ch.close();
  await tsa?.close();
  fs.rmSync(signing.dir, { recursive: true, force: true });
});

it('a rebalance while the TSA takes 3 s leaves no batch without its link', async () => {
  const spec = resolveSpec(pipeline(tsa.url));
  await createIntegrityTables(ch, spec);
  await createTopics(bed, [
    { topic: spec.kafka.topic.name, numPartitions: 2 },
    { topic: spec.deadLetter.topic, numPartitions: 1 },
  ]);
  const cfg = {
    ...integrityWorkerConfig(spec),
    tuning: { sessionTimeoutMs: 6_000, heartbeatIntervalMs: 500 },
  } as never;
  const workers: WorkerProcess[] = [];
  try {
    workers.push(spawnSigningWorker(bed, signing.keys, cfg, await freePort(), 'a'));
    const ready = (w: WorkerProcess) =>
      pollUntil(
        () => workerGet(w.port, '/readyz'),
        (r) => r.status === 200,
        60_000,
      );
    expect((await ready(workers[0])).status).toBe(200);
    const producer = await testProducer(bed);
    const lines = generateSampleLines('fortigate', 12_000, {
      seed: 5,
      malformedRatio: 0,
      startMs: Date.now() - 3_600_000,
    });
    const GARBAGE_EVERY = 40;
    for (let i = GARBAGE_EVERY - 1; i < lines.length; i += GARBAGE_EVERY)
      lines[i] = Buffer.concat([Buffer.from(`garbage #${i} `), Buffer.from([0xff, 0xfe, 0x7f])]);
    // Lines keep flowing for ~12 s; the second worker joins after ~3 s.
    let produced = 0;
    const flow = (async () => {
      for (let i = 0; i < lines.length; i += 200) {
        await produceLines(producer, spec.kafka.topic.name, 2, lines.slice(i, i + 200), 5);
        produced += Math.min(200, lines.length - i);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    await pollUntil(
      async () => produced,
      (n) => n >= 3_000,
      60_000,
      100,
    );
    workers.push(spawnSigningWorker(bed, signing.keys, cfg, await freePort(), 'b'));
    await flow;
    await producer.disconnect();
    const rows = `SELECT (SELECT count() FROM \`${id}\`.fw) + (SELECT count() FROM \`${id}\`.fw_dlq) AS n`;
    expect(
      await pollUntil(
        () => scalar(rows),
        (n) => n >= lines.length,
        180_000,
      ),
    ).toBe(lines.length);
    // Both workers took part (the rebalance happened while data flowed).
    expect((await ready(workers[1])).status).toBe(200);
  } finally {
    for (const w of workers) expect(await stopWorker(w)).toBe(0);
  }
  const dead = await scalar(`SELECT count() AS n FROM \`${id}\`.fw_dlq`);
  expect(dead).toBe(300);
  const linked = (t: string) =>
    scalar(`SELECT sum(row_count) AS n FROM \`${id}\`.fw_integrity WHERE table_name = '${t}'`);
  // Dead letters are chained (the base code linked none of them).
  expect(await linked('fw_dlq')).toBe(dead);
  for (const w of workers)
    expect(fs.readFileSync(w.logFile, 'utf8')).not.toMatch(/without an integrity link/);
  expect(await linked('fw')).toBe(12_000 - dead);
  for (const table of ['fw', 'fw_dlq']) {
    const { code, report } = await verify(table);
    expect(report.findings).toEqual([]);
    expect(report.stats.rowsRead).toBe(table === 'fw' ? 12_000 - dead : dead);
    expect(code).toBe(0);
  }
}, 300_000);

/** `verify` on a table; the credentials through the CLI's environment variables. */
function verify(table: string) {
  return verifyTable(bed, id, table, signing.publicKeyFile, 'env');
}
