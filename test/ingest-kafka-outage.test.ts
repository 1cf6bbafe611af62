/**
 * The receiver across a Kafka outage (issue 16): readiness fails with `kafka unreachable` while the
 * broker is down, lines sent over TCP meanwhile are held (bounded by the gate) and produced once the
 * broker is back, readiness recovers, and every line is in the topic exactly once.
 */
import net from 'node:net';
import { restartKafka, stopKafka } from './env/kafka';
import { freePort } from './env/process';
import { readTestBed, writeTestBed } from './env/testbed';
import { ingestConfig, readTopic, seqsOf, spawnReceiver } from './ingest-support';
import {
  createPipeline,
  dropPipeline,
  newPipeline,
  pollUntil,
  stopWorker,
  workerGet,
  type WorkerProcess,
} from './worker-support';

jest.setTimeout(300_000);

const p = newPipeline('ingest_outage', 2);
let receiver: WorkerProcess | undefined;

beforeAll(async () => {
  await createPipeline(readTestBed(), p);
});

afterAll(async () => {
  if (receiver) await stopWorker(receiver, 15_000);
  await dropPipeline(readTestBed(), p);
});

/** Sends lines `case=outage seq=from..to-1` over one TCP connection and closes it. */
function send(port: number, from: number, to: number): Promise<void> {
  const body = Array.from({ length: to - from }, (_, i) => `<134>fw-01 case=outage seq=${from + i}\n`).join(
    '',
  );
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.end(body));
    s.once('close', () => resolve());
    s.once('error', reject);
  });
}

test('readiness fails while Kafka is down, held lines are produced after it returns, exactly once', async () => {
  const bed = readTestBed();
  const [tcp, http] = [await freePort(), await freePort()];
  receiver = spawnReceiver(
    ingestConfig(bed, p, [{ name: 'tcp', transport: 'tcp', port: tcp }]),
    http,
    'outage',
  );
  expect(
    (
      await pollUntil(
        () => workerGet(http, '/readyz'),
        (r) => r.status === 200,
        60_000,
      )
    ).status,
  ).toBe(200);
  await send(tcp, 0, 500);
  const topic = await readTopic(bed, p.topic);
  try {
    await pollUntil(
      async () => new Set(seqsOf(topic.lines, 'outage')).size,
      (n) => n >= 500,
      60_000,
    );
    await stopKafka(bed.kafka!);
    try {
      const down = await pollUntil(
        () => workerGet(http, '/readyz'),
        (r) => r.status === 503,
        60_000,
      );
      expect(down).toEqual({ status: 503, body: 'kafka unreachable\n' });
      await send(tcp, 500, 1000);
      // Held, not dropped: the receiver read them and keeps them until Kafka answers.
      const m = await pollUntil(
        async () => (await workerGet(http, '/metrics')).body,
        (text) => /logpipeline_ingest_lines_received_total\{listener="tcp"\} 1000/.test(text),
        30_000,
      );
      expect(m).toMatch(/logpipeline_ingest_lines_received_total\{listener="tcp"\} 1000/);
    } finally {
      const now = readTestBed();
      writeTestBed({ ...now, kafka: await restartKafka(now.kafka!) });
    }
    expect(
      (
        await pollUntil(
          () => workerGet(http, '/readyz'),
          (r) => r.status === 200,
          90_000,
        )
      ).status,
    ).toBe(200);
    const seqs = await pollUntil(
      async () => seqsOf(topic.lines, 'outage'),
      (s) => new Set(s).size >= 1000,
      90_000,
    );
    expect(new Set(seqs).size).toBe(1000);
    // The producer is idempotent: its retries across the outage wrote nothing twice.
    expect(seqs.length).toBe(1000);
  } finally {
    await topic.stop();
  }
});
