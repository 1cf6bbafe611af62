/**
 * UDP loss on loopback (issue 16): the receiver entry point -> real Kafka; a C sender (bench/udpblast.c,
 * sendmmsg, paced per millisecond, ~800-byte FortiGate line per datagram, compiled here with `cc`)
 * at 50k, 100k and 200k lines/s for `--seconds` each. Loss is split into kernel drops (the socket's
 * /proc/net/udp counter, via the receiver's gauge) and application drops (by reason); `unaccounted`
 * must be 0. Also reports the rate the sender really achieved (it is CPU-starved on a loaded box).
 *   node dist/bench/ingest-udp.js [--seconds 3]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../test/env/process';
import { benchKafka, createTopic, metric, startBenchReceiver } from './ingest-support';

const i = process.argv.indexOf('--seconds');
const SECONDS = Number(i >= 0 ? process.argv[i + 1] : 3);

/** Builds the sender from bench/udpblast.c into `dir`. */
function buildBlaster(dir: string): string {
  const root = path.resolve(__dirname, '..', '..');
  const out = path.join(dir, 'udpblast');
  execFileSync('cc', ['-O2', '-o', out, path.join(root, 'bench', 'udpblast.c')]);
  return out;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingest-udp-bench-'));
  const kafka = await benchKafka(dir);
  try {
    const blast = buildBlaster(dir);
    const topic = `ingest-udp-${process.pid}`;
    await createTopic(kafka.bootstrap, topic, 3);
    const udpPort = await freePort();
    const rx = await startBenchReceiver(dir, kafka.bootstrap, topic, [
      { name: 'udp', transport: 'udp', port: udpPort },
    ]);
    const results = [];
    for (const rate of [50_000, 100_000, 200_000]) {
      const before = await rx.metrics();
      const cpu0 = rx.cpuSeconds();
      const sent = Number(
        execFileSync(blast, ['127.0.0.1', String(udpPort), String(rate), String(SECONDS)])
          .toString()
          .trim(),
      );
      // The receiver moves its counters and /proc/net/udp into metrics once a second: wait until
      // its received + dropped counts stop moving (the socket queue is empty).
      let after = await rx.metrics();
      for (let stable = 0, last = -1; stable < 3;) {
        await new Promise((r) => setTimeout(r, 1_000));
        after = await rx.metrics();
        const seen =
          metric(after, 'logpipeline_ingest_lines_received_total') +
          metric(after, 'logpipeline_ingest_udp_kernel_drops');
        stable = seen === last ? stable + 1 : 0;
        last = seen;
      }
      const d = (n: string, l?: string) => metric(after, n, l) - metric(before, n, l);
      const received = d('logpipeline_ingest_lines_received_total');
      const kernel = d('logpipeline_ingest_udp_kernel_drops');
      const app = d('logpipeline_ingest_dropped_total');
      results.push({
        targetRate: rate,
        achievedRate: Math.round(sent / SECONDS),
        sent,
        received,
        lossPct: +((100 * (sent - received)) / sent).toFixed(2),
        kernelDrops: kernel,
        appDrops: app,
        appQueueFull: d('logpipeline_ingest_dropped_total', 'queue_full'),
        unaccounted: sent - received - kernel - app,
        receiverCpuSeconds: +(rx.cpuSeconds() - cpu0).toFixed(2),
      });
    }
    await rx.stop();
    console.log(
      JSON.stringify({
        benchmark: 'ingest-udp',
        seconds: SECONDS,
        node: process.version,
        loadAverage: os.loadavg().map((x) => +x.toFixed(1)),
        rmemMax: Number(fs.readFileSync('/proc/sys/net/core/rmem_max', 'utf8')),
        results,
      }),
    );
  } finally {
    await kafka.release();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
