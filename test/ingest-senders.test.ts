/**
 * The syslog receiver with real senders (issue 16): the receiver process started from its config
 * file (UDP, TCP and TLS listeners, client certificates required), rsyslogd (omfwd UDP, TCP LF, TCP
 * octet-counted, TLS x509/name with a client cert) and util-linux logger (--udp, --tcp,
 * --octet-count --rfc5424) sending. Lines are counted in the real Kafka topic with their sender
 * header; a SIGKILL of the receiver mid-stream over TCP loses nothing rsyslog sent after the
 * receiver's last acknowledged line (rsyslog's queue retries; duplicates are reported); and a real
 * worker stores every line of the topic exactly once in ClickHouse with its sender_ip.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import type { ListenerConfig } from '../common/src/ingest-config';
import { REFERENCE_COLUMNS } from '../consumer/src/encode/reference-columns';
import { freePort } from './env/process';
import { makeTestCerts, startRsyslog, type RsyslogForward, type TestCerts } from './env/rsyslog';
import { bedScratchDir, readTestBed } from './env/testbed';
import { ingestConfig, readTopic, seqsOf, spawnReceiver } from './ingest-support';
import {
  chClient,
  createPipeline,
  dropPipeline,
  kafkaClient,
  metricSum,
  newPipeline,
  pollUntil,
  spawnWorker,
  stopWorker,
  waitCaughtUp,
  workerConfig,
  workerGet,
  type WorkerProcess,
} from './worker-support';

jest.setTimeout(300_000);

const p = newPipeline('ingest', 3);
const dir = bedScratchDir('ingest-test-');
let certs: TestCerts;
let listeners: ListenerConfig[];
let receiver: WorkerProcess | undefined;
let httpPort = 0;
let topic: Awaited<ReturnType<typeof readTopic>>;
const stops: Array<() => Promise<unknown>> = [];

const line = (tag: string, i: number) =>
  `<189>date=2026-12-03 time=10:00:00 devname="FGT-01" srcip=10.0.0.${i % 250} dstip=192.0.2.1 action="accept" case=${tag} seq=${i}`;

async function startReceiver(tag: string): Promise<void> {
  const bed = readTestBed();
  const cfg = ingestConfig(bed, p, listeners, {
    tls: { certFile: certs.serverCert, keyFile: certs.serverKey, caFile: certs.ca, clientAuth: 'required' },
  });
  receiver = spawnReceiver(cfg, httpPort, tag);
  const ready = await pollUntil(
    () => workerGet(httpPort, '/readyz'),
    (r) => r.status === 200,
    60_000,
  );
  if (ready.status !== 200)
    throw new Error(`receiver not ready: ${ready.body}\n${fs.readFileSync(receiver.logFile, 'utf8')}`);
}

/** Waits until every seq 0..n-1 of `tag` is in the topic; returns the seqs seen (with duplicates). */
async function waitForSeqs(tag: string, n: number, timeoutMs = 90_000): Promise<number[]> {
  const seen = await pollUntil(
    async () => seqsOf(topic.lines, tag),
    (s) => new Set(s).size >= n,
    timeoutMs,
    200,
  );
  return seen;
}

const missing = (seqs: number[], n: number) => {
  const have = new Set(seqs);
  return Array.from({ length: n }, (_, i) => i).filter((i) => !have.has(i));
};

beforeAll(async () => {
  const bed = readTestBed();
  await createPipeline(bed, p);
  const ch = chClient(bed);
  await ch.command({
    query: `ALTER TABLE ${p.database}.\`${p.table}\` ADD COLUMN kafka_line UInt32, ADD COLUMN sender_ip IPv6`,
  });
  await ch.close();
  certs = makeTestCerts(path.join(dir, 'certs'));
  const [udp, tcp, tls] = [await freePort(), await freePort(), await freePort()];
  httpPort = await freePort();
  listeners = [
    { name: 'udp', transport: 'udp', port: udp },
    { name: 'tcp', transport: 'tcp', port: tcp },
    { name: 'tls', transport: 'tls', port: tls },
  ];
  topic = await readTopic(bed, p.topic);
  await startReceiver('receiver-1');
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  if (receiver) await stopWorker(receiver, 15_000);
  await topic?.stop();
  await dropPipeline(readTestBed(), p);
});

const port = (name: string) => listeners.find((l) => l.name === name)!.port;

test('rsyslog over UDP, TCP (LF and octet-counted) and TLS with a client cert: every line in Kafka with its sender', async () => {
  const N = 300;
  const cases: Array<[string, RsyslogForward]> = [
    ['rs-udp', { port: port('udp'), protocol: 'udp' }],
    ['rs-tcp-lf', { port: port('tcp'), protocol: 'tcp', framing: 'traditional' }],
    ['rs-tcp-octet', { port: port('tcp'), protocol: 'tcp', framing: 'octet-counted', template: 'rfc5424' }],
    [
      'rs-tls',
      { port: port('tls'), protocol: 'tcp', framing: 'octet-counted', tls: { mode: 'x509/name', certs } },
    ],
  ];
  for (const [tag, forward] of cases) {
    const rs = await startRsyslog(path.join(dir, tag), forward);
    stops.push(rs.stop);
    rs.append(Array.from({ length: N }, (_, i) => line(tag, i)));
  }
  for (const [tag] of cases) {
    const seqs = await waitForSeqs(tag, N);
    expect({ tag, missing: missing(seqs, N) }).toEqual({ tag, missing: [] });
    const senders = new Set(topic.lines.filter((l) => l.line.includes(`case=${tag} `)).map((l) => l.sender));
    expect([...senders]).toEqual(['127.0.0.1']);
  }
  // Packed: far fewer Kafka messages than lines.
  expect(topic.messages()).toBeLessThan(topic.lines.length / 10);
});

test('logger --udp, --tcp and --tcp --octet-count --rfc5424: every line in Kafka', async () => {
  const N = 20;
  const modes: Array<[string, string, string[]]> = [
    ['lg-udp', 'udp', ['--udp', '--rfc3164']],
    ['lg-tcp', 'tcp', ['--tcp', '--rfc3164']],
    ['lg-octet', 'tcp', ['--tcp', '--octet-count', '--rfc5424']],
  ];
  for (const [tag, listener, flags] of modes)
    for (let i = 0; i < N; i++)
      execFileSync('logger', [
        '-n',
        '127.0.0.1',
        '-P',
        String(port(listener)),
        ...flags,
        '-t',
        'fwtest',
        `case=${tag} seq=${i}`,
      ]);
  for (const [tag] of modes) {
    const seqs = await waitForSeqs(tag, N, 30_000);
    expect({ tag, missing: missing(seqs, N) }).toEqual({ tag, missing: [] });
  }
});

test('TLS without a client certificate is refused and counted (clientAuth: required)', async () => {
  await new Promise<string>((resolve) => {
    const s = tls.connect(
      { port: port('tls'), host: '127.0.0.1', ca: fs.readFileSync(certs.ca), servername: 'syslog-receiver' },
      () => {
        s.write(`${line('no-cert', 0)}\n`);
      },
    );
    s.on('error', (err) => resolve(`error: ${err.message}`));
    s.on('close', () => resolve('closed'));
  });
  const failures = await pollUntil(
    async () =>
      metricSum(
        (await workerGet(httpPort, '/metrics')).body,
        'logpipeline_ingest_tls_handshake_failures_total',
      ),
    (n) => n >= 1,
    10_000,
  );
  expect(failures).toBeGreaterThanOrEqual(1);
  expect(seqsOf(topic.lines, 'no-cert')).toEqual([]);
});

test('SIGKILL of the receiver mid-stream over TCP: rsyslog retries, no line is lost (duplicates reported)', async () => {
  const tag = 'kill';
  const rs = await startRsyslog(path.join(dir, tag), {
    port: port('tcp'),
    protocol: 'tcp',
    framing: 'octet-counted',
  });
  stops.push(rs.stop);
  rs.append(Array.from({ length: 200 }, (_, i) => line(tag, i)));
  // The connection is open and everything read so far is acknowledged by Kafka: kill now.
  await waitForSeqs(tag, 200);
  receiver!.child.kill('SIGKILL');
  await receiver!.exited;
  // The stream goes on while the receiver is gone: rsyslog's queue holds and retries.
  rs.append(Array.from({ length: 200 }, (_, i) => line(tag, 200 + i)));
  await startReceiver('receiver-2');
  rs.append(Array.from({ length: 200 }, (_, i) => line(tag, 400 + i)));
  const seqs = await waitForSeqs(tag, 600, 120_000);
  expect(missing(seqs, 600)).toEqual([]);
  const duplicates = seqs.length - new Set(seqs).size;
  // rsyslog may resend the message in hand when the connection broke: reported, not asserted.
  console.log(`ingest kill test: 600 lines, ${duplicates} duplicate(s) from rsyslog's resend on reconnect`);
});

test('a worker stores every line of the topic exactly once in ClickHouse, with sender_ip', async () => {
  const bed = readTestBed();
  const columns = [
    ...REFERENCE_COLUMNS.map((c) => ({ name: c.name, type: c.type, source: c.source! })),
    { name: 'kafka_line', type: 'UInt32', source: 'kafka_line' },
    { name: 'sender_ip', type: 'IPv6', source: 'sender_ip' },
  ];
  const cfg = workerConfig(bed, p);
  const worker = spawnWorker(
    bed,
    { ...cfg, clickhouse: { ...cfg.clickhouse, columns } },
    await freePort(),
    'worker',
  );
  stops.push(() => stopWorker(worker, 30_000));
  await waitCaughtUp(bed, p, 180_000);
  // The reader has every message of the topic (its count equals the log ends) before comparing.
  const admin = kafkaClient(bed, 'ingest-ends').admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(p.topic);
  await admin.disconnect();
  const total = ends.reduce((n, e) => n + Number(e.high), 0);
  expect(
    await pollUntil(
      async () => topic.messages(),
      (n) => n >= total,
      60_000,
    ),
  ).toBe(total);
  const ch = chClient(bed);
  try {
    const [r] = await (
      await ch.query({
        query: `SELECT count() AS rows, uniqExact(kafka_partition, kafka_offset, kafka_line) AS distinct_rows,
                  countIf(sender_ip = toIPv6('127.0.0.1')) AS from_local,
                  (SELECT count() FROM ${p.database}.\`${p.dlqTable}\`) AS dlq
                FROM ${p.database}.\`${p.table}\``,
        format: 'JSONEachRow',
      })
    ).json<{ rows: string; distinct_rows: string; from_local: string; dlq: string }>();
    const lines = topic.lines.length;
    // Exactly once from Kafka on: one row (or dead letter) per line of the topic, no row twice.
    expect(Number(r.rows) + Number(r.dlq)).toBe(lines);
    expect(Number(r.distinct_rows)).toBe(Number(r.rows));
    expect(Number(r.from_local)).toBe(Number(r.rows));
    expect(Number(r.rows)).toBeGreaterThan(1500);
  } finally {
    await ch.close();
  }
});
