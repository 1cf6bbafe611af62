/**
 * The topic's max.message.bytes lowered outside the spec while the receiver runs (issue 16): the
 * receiver read the limit at start, so its record batches and packed values became too large for
 * the broker (MESSAGE_TOO_LARGE) and it retried the same send for ever. Now it re-reads the limit,
 * sends smaller record batches and splits refused values by lines: with the real broker, every line
 * sent after the limit was cut to 8 KiB arrives exactly once, and the splits are counted.
 */
import { createHash } from 'node:crypto';
import net from 'node:net';
import { ConfigResourceTypes } from 'kafkajs';
import { freePort } from './env/process';
import { readTestBed } from './env/testbed';
import { ingestConfig, readTopic, seqsOf, spawnReceiver } from './ingest-support';
import {
  createPipeline,
  dropPipeline,
  kafkaClient,
  newPipeline,
  pollUntil,
  stopWorker,
  workerGet,
  type WorkerProcess,
} from './worker-support';

jest.setTimeout(300_000);

const p = newPipeline('ingest_too_large', 1);
let receiver: WorkerProcess | undefined;

beforeAll(async () => {
  await createPipeline(readTestBed(), p);
});

afterAll(async () => {
  if (receiver) await stopWorker(receiver, 15_000);
  await dropPipeline(readTestBed(), p);
});

/** Lines `case=big seq=from..to-1` with a digest each (~2x compressible, like real lines), over one TCP connection. */
function send(port: number, from: number, to: number): Promise<void> {
  const line = (i: number) =>
    `<134>fw-01 case=big seq=${i} ${createHash('sha256').update(String(i)).digest('hex')}\n`;
  const body = Array.from({ length: to - from }, (_, i) => line(from + i)).join('');
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.end(body));
    s.once('close', () => resolve());
    s.once('error', reject);
  });
}

async function setTopicLimit(bytes: number): Promise<void> {
  const admin = kafkaClient(readTestBed(), 'too-large-test').admin();
  await admin.connect();
  try {
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: p.topic,
          configEntries: [{ name: 'max.message.bytes', value: String(bytes) }],
        },
      ],
    });
  } finally {
    await admin.disconnect();
  }
}

test('after max.message.bytes is lowered under it, the receiver splits and delivers every line once', async () => {
  const bed = readTestBed();
  const [tcp, http] = [await freePort(), await freePort()];
  receiver = spawnReceiver(
    ingestConfig(bed, p, [{ name: 'tcp', transport: 'tcp', port: tcp }], { compression: 'zstd' }),
    http,
    'too-large',
  );
  const ready = await pollUntil(
    () => workerGet(http, '/readyz'),
    (r) => r.status === 200,
    60_000,
  );
  expect(ready.status).toBe(200);
  const topic = await readTopic(bed, p.topic);
  try {
    await send(tcp, 0, 2000);
    await pollUntil(
      async () => new Set(seqsOf(topic.lines, 'big')).size,
      (n) => n >= 2000,
      90_000,
    );
    // ~100 KB per packed value, ~50 KB compressed: far above the new limit.
    await setTopicLimit(8192);
    await send(tcp, 2000, 6000);
    const seqs = await pollUntil(
      async () => seqsOf(topic.lines, 'big'),
      (s) => new Set(s).size >= 6000,
      180_000,
    );
    expect(new Set(seqs).size).toBe(6000);
    // Refused sends wrote nothing; the idempotent producer wrote nothing twice.
    expect(seqs.length).toBe(6000);
    const metrics = (await workerGet(http, '/metrics')).body;
    expect(metrics).toMatch(/^logpipeline_ingest_too_large_total\{action="split"\} [1-9]/m);
    expect(metrics).not.toMatch(/^logpipeline_ingest_too_large_total\{action="dropped"\} [1-9]/m);
    expect(receiver.child.exitCode).toBeNull();
  } finally {
    await topic.stop();
  }
});
