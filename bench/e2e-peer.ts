/**
 * The peer of the end-to-end benchmark, run as its own process so its CPU time is its own:
 * ClickHouse's Kafka table engine (inside chdb) consuming the benchmark topic, with a
 * materialized view that parses FortiGate key=value lines in SQL into the same table schema the
 * worker fills (REFERENCE_COLUMNS). It creates its tables and prints `{"ready":true}`; the parent
 * measures its CPU from /proc the same way as the worker's (from the group's first assignment to
 * the moment the group's committed offsets reach the end of the topic: the engine commits a block
 * after the view stored it) and then writes one line to stdin. The peer checks that every row is
 * stored and parsed and prints one JSON line (PeerResult), polling nothing while it is measured.
 *
 * One Kafka consumer (kafka_num_consumers = 1), like the one worker it is compared with. With two
 * on three partitions the second consumer's join usually came while the first was filling a block
 * (the bed's broker starts rebalances at once: group.initial.rebalance.delay.ms = 0); the revoked
 * consumer drops that block and its messages are read again: 5-39 % more messages read
 * (system.kafka_consumers) in 5 of 6 such runs, and in alternating pairs one consumer read 4-17 %
 * more lines per CPU-second in 4 of 5 — by chance of timing. A longer kafka_flush_interval_ms
 * (7.5 s: one part instead of 2-3) measured the same (73.7k / 90.1k against 74.4k / 87.7k).
 * Usage: node dist/bench/e2e-peer.js '<json PeerArgs>'
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Session } from 'chdb';
import { ACTION_ENUM, REFERENCE_COLUMNS } from '../consumer/src/encode/reference-columns';

/** What the parent passes in. */
export interface PeerArgs {
  broker: string;
  topic: string;
  group: string;
  lines: number;
  timeoutMs: number;
  /** Kafka consumers of the engine (default 1: see the module comment). */
  consumers?: number;
  /** kafka_flush_interval_ms (default 1000). */
  flushIntervalMs?: number;
}

/** What the peer prints once its tables exist (the parent starts watching the group then). */
export interface PeerReady {
  ready: true;
  engine: string;
}

/** What the peer prints at the end. */
export interface PeerResult {
  rows: number;
  parsedRows: number;
  /** Wall and CPU seconds (the process's own count) from creating its tables to the parent's signal. */
  wallSeconds: number;
  cpuSeconds: number;
  engine: string;
  /** Kafka messages the engine read (more than the topic holds when a rebalance made it read again). */
  messagesRead: number;
  /** Partition revocations the engine's consumers went through. */
  rebalanceRevocations: number;
  /** Active parts of the table at the end (one per stored block until merges run). */
  parts: number;
}

/** The MV's SELECT list, one expression per REFERENCE_COLUMNS entry (FortiGate key=value in SQL). */
export function fortigateSelect(): string {
  const kv = (k: string) => `kv['${k}']`;
  const exprs: Record<string, string> = {
    ts: `toDateTime64(fromUnixTimestamp64Nano(toInt64OrZero(${kv('eventtime')})), 3, 'UTC')`,
    ingest_time: `now64(3, 'UTC')`,
    vendor: `'fortigate'`,
    device: kv('devname'),
    src_ip: `toIPv6OrDefault(${kv('srcip')})`,
    dst_ip: `toIPv6OrDefault(${kv('dstip')})`,
    src_port: `toUInt16OrNull(${kv('srcport')})`,
    dst_port: `toUInt16OrNull(${kv('dstport')})`,
    // FortiGate SNAT/DNAT translations (the worker's parser reads the same keys).
    nat_src_ip: `toIPv6OrNull(${kv('transip')})`,
    nat_src_port: `toUInt16OrNull(${kv('transport')})`,
    nat_dst_ip: `toIPv6OrNull(${kv('tranip')})`,
    nat_dst_port: `toUInt16OrNull(${kv('tranport')})`,
    proto: `multiIf(${kv('proto')} = '6', 'tcp', ${kv('proto')} = '17', 'udp', ${kv('proto')})`,
    action: `CAST(transform(${kv('action')}, ['accept', 'close', 'timeout', 'deny', 'server-rst', 'client-rst'], ['allow', 'close', 'close', 'deny', 'reset', 'reset'], 'unknown') AS ${ACTION_ENUM})`,
    bytes: `toUInt64OrNull(${kv('sentbyte')}) + toUInt64OrZero(${kv('rcvdbyte')})`,
    rule: kv('policyid'),
    severity: `CAST(NULL AS Nullable(UInt8))`,
    message: `''`,
    raw: 'line',
    kafka_topic: '_topic',
    kafka_partition: '_partition',
    kafka_offset: '_offset',
  };
  const missing = REFERENCE_COLUMNS.filter((c) => exprs[c.name] === undefined).map((c) => c.name);
  if (missing.length > 0) throw new Error(`peer has no SQL for columns ${missing.join(', ')}`);
  return REFERENCE_COLUMNS.map((c) => `${exprs[c.name]} AS \`${c.name}\``).join(',\n  ');
}

function cpuSeconds(u: NodeJS.CpuUsage): number {
  return (u.user + u.system) / 1e6;
}

function createTables(s: Session, args: PeerArgs): void {
  const cols = REFERENCE_COLUMNS.map((c) => `\`${c.name}\` ${c.type}`).join(', ');
  s.query(`CREATE TABLE fw (${cols}) ENGINE = MergeTree ORDER BY (kafka_partition, kafka_offset)`);
  s.query(
    `CREATE TABLE fw_queue (line String) ENGINE = Kafka SETTINGS kafka_broker_list = '${args.broker}', kafka_topic_list = '${args.topic}',
     kafka_group_name = '${args.group}', kafka_format = 'LineAsString', kafka_num_consumers = ${args.consumers ?? 1},
     kafka_max_block_size = 1048576, kafka_poll_max_batch_size = 65536, kafka_flush_interval_ms = ${args.flushIntervalMs ?? 1000},
     kafka_thread_per_consumer = 1`,
  );
  s.query(
    `CREATE MATERIALIZED VIEW fw_mv TO fw AS SELECT ${fortigateSelect()} FROM (SELECT line, _topic, _partition, _offset, extractKeyValuePairs(line, '=', ' ', '"') AS kv FROM fw_queue)`,
  );
}

/** Resolves at the parent's first line on stdin (or when stdin closes). */
function parentSignal(): Promise<void> {
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input: process.stdin });
    rl.once('line', () => (rl.close(), resolve()));
    rl.once('close', resolve);
  });
}

/** Rows stored, waiting (bounded) for the last ones should the parent's signal come first. */
async function storedRows(s: Session, args: PeerArgs, t0: number): Promise<number> {
  for (;;) {
    const rows = Number(s.query('SELECT count() FROM fw', 'TSV'));
    if (rows >= args.lines || Date.now() - t0 > args.timeoutMs) return rows;
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function run(args: PeerArgs): Promise<PeerResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-peer-'));
  const s = new Session(dir);
  try {
    const engine = s.query('SELECT version()', 'TSV').trim();
    const cpu0 = process.cpuUsage();
    const t0 = Date.now();
    const signal = parentSignal();
    createTables(s, args);
    process.stdout.write(`${JSON.stringify({ ready: true, engine } satisfies PeerReady)}\n`);
    await signal;
    const cpu = cpuSeconds(process.cpuUsage(cpu0));
    const wallSeconds = (Date.now() - t0) / 1000;
    const rows = await storedRows(s, args, t0);
    // Proof the view parsed the lines (not just stored them): rows with both ports and an address.
    const parsedRows = Number(
      s.query(
        "SELECT countIf(dst_port IS NOT NULL AND src_port IS NOT NULL AND src_ip != toIPv6('::')) FROM fw",
        'TSV',
      ),
    );
    const [messagesRead, rebalanceRevocations] = s
      .query(
        "SELECT sum(num_messages_read), sum(num_rebalance_revocations) FROM system.kafka_consumers WHERE table = 'fw_queue'",
        'TSV',
      )
      .trim()
      .split('\t')
      .map(Number);
    const parts = Number(s.query("SELECT count() FROM system.parts WHERE table = 'fw' AND active", 'TSV'));
    s.query('DROP TABLE fw_mv');
    s.query('DROP TABLE fw_queue');
    return {
      rows,
      parsedRows,
      wallSeconds,
      cpuSeconds: cpu,
      engine,
      messagesRead,
      rebalanceRevocations,
      parts,
    };
  } finally {
    s.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  run(JSON.parse(process.argv[2]) as PeerArgs).then(
    (r) => {
      process.stdout.write(`${JSON.stringify(r)}\n`);
      process.exit(0);
    },
    (err: Error) => {
      process.stdout.write(`${JSON.stringify({ error: err.message })}\n`);
      process.exit(1);
    },
  );
}
