/**
 * Receiver -> real Kafka over TCP, packed (issue 16 target: >= 200k lines per receiver CPU-second,
 * <= 1/100 messages per line at the default packing). The receiver entry point runs as its own
 * process; one sender process writes FortiGate lines (LF framing) as fast as the socket takes them;
 * the receiver's CPU (utime+stime from /proc) is measured from the first byte until its metrics show
 * every line acknowledged by Kafka. Prints JSON with the median of `--runs` runs.
 *   node dist/bench/ingest-kafka.js [--lines 1000000] [--runs 3] [--codec lz4|zstd] [--max-bytes N]
 *   NODE_ARGS="--max-semi-space-size=64" node dist/bench/ingest-kafka.js   (V8 flags of the receiver)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateSampleLines } from '../test/fixtures/samples';
import { freePort } from '../test/env/process';
import { benchKafka, createTopic, median, metric, startBenchReceiver } from './ingest-support';

function flag(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

const LINES = Number(flag('lines', '1000000'));
const RUNS = Number(flag('runs', '3'));
const CODEC = flag('codec', 'lz4');
const MAX_BYTES = Number(flag('max-bytes', String(1024 * 1024)));

async function oneRun(dir: string, bootstrap: string, run: number, payload: string, repeats: number) {
  const topic = `ingest-bench-${process.pid}-${run}`;
  await createTopic(bootstrap, topic, 3);
  const tcpPort = await freePort();
  const rx = await startBenchReceiver(
    dir,
    bootstrap,
    topic,
    [{ name: 'tcp', transport: 'tcp', port: tcpPort }],
    {
      compression: CODEC,
      packing: { maxLines: 1024, maxBytes: MAX_BYTES, lingerMs: 100 },
    },
  );
  const sent = repeats * 10_000;
  const cpu0 = rx.cpuSeconds();
  const sys0 = rx.systemCpuSeconds();
  const t0 = Date.now();
  const sender = spawn(process.execPath, [
    '-e',
    `const net=require('net'),fs=require('fs');const b=fs.readFileSync(${JSON.stringify(payload)});
     const s=net.connect(${tcpPort},'127.0.0.1',async()=>{for(let i=0;i<${repeats};i++){if(!s.write(b))await new Promise(r=>s.once('drain',r));}s.end();});`,
  ]);
  await new Promise((r) => sender.once('exit', r));
  let m = '';
  for (;;) {
    m = await rx.metrics();
    if (metric(m, 'logpipeline_ingest_lines_produced_total') >= sent) break;
    if (Date.now() - t0 > 600_000) throw new Error('lines not produced in time');
    await new Promise((r) => setTimeout(r, 100));
  }
  const cpu = rx.cpuSeconds() - cpu0;
  const sys = rx.systemCpuSeconds() - sys0;
  const wall = (Date.now() - t0) / 1000;
  const lines = metric(m, 'logpipeline_ingest_lines_produced_total');
  const messages = metric(m, 'logpipeline_ingest_messages_produced_total');
  const wireBytes = metric(m, 'logpipeline_ingest_wire_bytes_produced_total');
  const plainBytes = metric(m, 'logpipeline_ingest_bytes_produced_total');
  await rx.stop();
  const gc = gcCounts(rx.logFile);
  return {
    lines,
    messages,
    messagesPerLine: messages / lines,
    receiverCpuSeconds: cpu,
    linesPerReceiverCpuSecond: lines / cpu,
    systemCpuShare: +(sys / cpu).toFixed(2),
    wallSeconds: wall,
    valueCompressionRatio: +(plainBytes / wireBytes).toFixed(2),
    ...(gc ? { gc } : {}),
    drops: metric(m, 'logpipeline_ingest_dropped_total'),
    produceFailures: metric(m, 'logpipeline_ingest_produce_failures_total'),
  };
}

/** Collections and their pause ms by kind from the receiver's --trace-gc output (undefined without it). */
function gcCounts(logFile: string): Record<string, number> | undefined {
  if (!(process.env.NODE_ARGS ?? '').includes('--trace-gc')) return undefined;
  const counts: Record<string, number> = {};
  const text = fs.readFileSync(logFile, 'utf8');
  for (const m of text.matchAll(
    /ms: (Scavenge|Minor Mark-Sweep|Mark-Compact|Mark-Sweep)\b.*?MB, ([\d.]+) \//g,
  )) {
    counts[m[1]] = (counts[m[1]] ?? 0) + 1;
    counts[`${m[1]} ms`] = Math.round((counts[`${m[1]} ms`] ?? 0) + Number(m[2]));
  }
  return counts;
}

/**
 * `--ab "<node args A>|<node args B>"`: runs A and B alternately (same load, same Kafka) and prints
 * each one's median and B/A. E.g. `--ab "-r kafkajs|"` compares kafkajs's JavaScript CRC-32C
 * (kafkajs preloaded, so the receiver's native patch cannot apply) with the native one.
 */
async function compare(dir: string, bootstrap: string, payload: string, repeats: number): Promise<void> {
  const variants = flag('ab', '|').split('|');
  const results: number[][] = variants.map(() => []);
  for (let r = 0; r < RUNS; r++)
    for (let v = 0; v < variants.length; v++) {
      process.env.NODE_ARGS = variants[v];
      const run = await oneRun(dir, bootstrap, r * variants.length + v, payload, repeats);
      results[v].push(run.linesPerReceiverCpuSecond);
    }
  const medians = results.map((xs) => Math.round(median(xs)));
  console.log(
    JSON.stringify({
      benchmark: 'ingest-kafka-ab',
      codec: CODEC,
      node: process.version,
      loadAverage: os.loadavg().map((x) => +x.toFixed(1)),
      variants: variants.map((args, i) => ({
        nodeArgs: args,
        linesPerReceiverCpuSecond: medians[i],
        runs: results[i].map(Math.round),
      })),
      ratioBtoA: +(medians[1] / medians[0]).toFixed(2),
    }),
  );
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingest-kafka-bench-'));
  const kafka = await benchKafka(dir);
  try {
    const sample = generateSampleLines('fortigate', 10_000, { seed: 3 });
    const payload = path.join(dir, 'lines.txt');
    fs.writeFileSync(payload, Buffer.concat(sample.flatMap((l) => [l, Buffer.from('\n')])));
    const repeats = Math.max(1, Math.round(LINES / 10_000));
    if (process.argv.includes('--ab')) return await compare(dir, kafka.bootstrap, payload, repeats);
    const runs = [];
    for (let r = 0; r < RUNS; r++) runs.push(await oneRun(dir, kafka.bootstrap, r, payload, repeats));
    console.log(
      JSON.stringify({
        benchmark: 'ingest-kafka',
        transport: 'tcp',
        codec: CODEC,
        packing: { maxLines: 1024, maxBytes: MAX_BYTES, lingerMs: 100 },
        nodeArgs: process.env.NODE_ARGS ?? '',
        node: process.version,
        loadAverage: os.loadavg().map((x) => +x.toFixed(1)),
        avgLineBytes: Math.round(fs.statSync(payload).size / 10_000),
        linesPerRun: repeats * 10_000,
        linesPerReceiverCpuSecond: Math.round(median(runs.map((x) => x.linesPerReceiverCpuSecond))),
        messagesPerLine: +median(runs.map((x) => x.messagesPerLine)).toFixed(5),
        runs: runs.map((x) => ({
          ...x,
          linesPerReceiverCpuSecond: Math.round(x.linesPerReceiverCpuSecond),
          messagesPerLine: +x.messagesPerLine.toFixed(5),
          receiverCpuSeconds: +x.receiverCpuSeconds.toFixed(2),
        })),
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
