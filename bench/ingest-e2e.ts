/**
 * End to end through the syslog receiver and a worker (issue 16): one TCP sender process writes
 * FortiGate lines to the receiver (packed into Kafka), one worker stores them in ClickHouse with
 * sender_ip. Reports lines per total CPU-second (receiver + worker, utime+stime from /proc, from the
 * first byte until the worker's group has committed everything), next to the e2e benchmark's
 * single-line relay path. Needs a test bed with Kafka and ClickHouse: run it through `npm run bench`
 * (`--only ingest-e2e`), which starts one and sets LP_TESTBED_FILE.
 *   node dist/bench/ingest-e2e.js [--lines 300000]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REFERENCE_COLUMNS } from '../consumer/src/encode/reference-columns';
import { generateSampleLines } from '../test/fixtures/samples';
import { freePort } from '../test/env/process';
import { readTestBed } from '../test/env/testbed';
import {
  chClient,
  createPipeline,
  dropPipeline,
  newPipeline,
  spawnWorker,
  stopWorker,
  waitCaughtUp,
  workerConfig,
} from '../test/worker-support';
import { metric, startBenchReceiver } from './ingest-support';

const i = process.argv.indexOf('--lines');
const LINES = Number(i >= 0 ? process.argv[i + 1] : 300_000);

/** utime + stime of a process so far, seconds. */
function cpuOf(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

async function main(): Promise<void> {
  const bed = readTestBed();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingest-e2e-bench-'));
  const p = newPipeline('ingest_e2e', 3);
  await createPipeline(bed, p);
  const ch = chClient(bed);
  await ch.command({
    query: `ALTER TABLE ${p.database}.\`${p.table}\` ADD COLUMN kafka_line UInt32, ADD COLUMN sender_ip IPv6`,
  });
  try {
    const tcpPort = await freePort();
    const rx = await startBenchReceiver(dir, bed.kafka!.bootstrap, p.topic, [
      { name: 'tcp', transport: 'tcp', port: tcpPort },
    ]);
    const cfg = workerConfig(bed, p, {
      batch: { maxRows: 100_000, maxBytes: 16 * 1024 * 1024, maxDelayMs: 1_000 },
    });
    const columns = [
      ...REFERENCE_COLUMNS.map((c) => ({ name: c.name, type: c.type, source: c.source! })),
      { name: 'kafka_line', type: 'UInt32', source: 'kafka_line' },
      { name: 'sender_ip', type: 'IPv6', source: 'sender_ip' },
    ];
    const worker = spawnWorker(
      bed,
      { ...cfg, clickhouse: { ...cfg.clickhouse, columns } },
      await freePort(),
      'worker',
    );
    const sample = generateSampleLines('fortigate', 10_000, { seed: 3 });
    const payload = path.join(dir, 'lines.txt');
    fs.writeFileSync(payload, Buffer.concat(sample.flatMap((l) => [l, Buffer.from('\n')])));
    const repeats = Math.max(1, Math.round(LINES / 10_000));
    const [rx0, w0] = [rx.cpuSeconds(), cpuOf(worker.child.pid!)];
    const t0 = Date.now();
    const sender = spawn(process.execPath, [
      '-e',
      `const net=require('net'),fs=require('fs');const b=fs.readFileSync(${JSON.stringify(payload)});
       const s=net.connect(${tcpPort},'127.0.0.1',async()=>{for(let i=0;i<${repeats};i++){if(!s.write(b))await new Promise(r=>s.once('drain',r));}s.end();});`,
    ]);
    await new Promise((r) => sender.once('exit', r));
    for (;;) {
      if (metric(await rx.metrics(), 'logpipeline_ingest_lines_produced_total') >= repeats * 10_000) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await waitCaughtUp(bed, p, 600_000);
    const [rxCpu, wCpu] = [rx.cpuSeconds() - rx0, cpuOf(worker.child.pid!) - w0];
    const wall = (Date.now() - t0) / 1000;
    const [r] = await (
      await ch.query({
        query: `SELECT count() AS rows, countIf(sender_ip = toIPv6('127.0.0.1')) AS with_sender FROM ${p.database}.\`${p.table}\``,
        format: 'JSONEachRow',
      })
    ).json<{ rows: string; with_sender: string }>();
    await stopWorker(worker, 30_000);
    await rx.stop();
    const rows = Number(r.rows);
    console.log(
      JSON.stringify({
        benchmark: 'ingest-e2e',
        node: process.version,
        loadAverage: os.loadavg().map((x) => +x.toFixed(1)),
        lines: repeats * 10_000,
        rows,
        rowsWithSender: Number(r.with_sender),
        receiverCpuSeconds: +rxCpu.toFixed(2),
        workerCpuSeconds: +wCpu.toFixed(2),
        linesPerTotalCpuSecond: Math.round(rows / (rxCpu + wCpu)),
        linesPerReceiverCpuSecond: Math.round(rows / rxCpu),
        linesPerWorkerCpuSecond: Math.round(rows / wCpu),
        wallSeconds: wall,
      }),
    );
  } finally {
    await ch.close();
    await dropPipeline(bed, p);
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
