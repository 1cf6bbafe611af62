/**
 * Shared fixture of the compliance tests: a pipeline's real tables (DDL from the operator's
 * builder, firewall preset, integrity enabled) in a fresh database of the test bed's ClickHouse,
 * and batches produced the way the worker produces them — a TSV payload sealed by the integrity
 * library, inserted with its deduplication token, then its link.
 */
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { IntegrityRecorder, type SealedBatch } from '../consumer/src/integrity';
import { msText } from '../common/src/integrity/chain';
import { quoteIdentifier } from '../common/src/sql/identifiers';
import { batchToken } from '../consumer/src/sink/token';
import type { ResolvedSpec } from '../operator/src/api/defaults';
import {
  buildTableDDL,
  buildWorkerColumns,
  ddlStatements,
  type TableDDL,
} from '../operator/src/desired/clickhouse';
import { FIREWALL_COLUMNS } from '../operator/src/desired/clickhouse/presets';
import { runVerify } from '../operator/cli/verify';
import type { VerifyReport } from '../operator/src/compliance/verify-report';
import { resolved } from './fixtures/clickhouse-testing';
import { readTestBed, type ClickHouseBed } from './env/testbed';

/** The bed's ClickHouse (throws when the bed has none: integration tests need a real engine). */
export function clickhouseBed(): ClickHouseBed {
  const bed = readTestBed().clickhouse;
  if (!bed) throw new Error('the test bed has no ClickHouse part: compliance tests need a real engine');
  return bed;
}

/** A client of the bed's ClickHouse. */
export function bedClient(): ClickHouseClient {
  const bed = clickhouseBed();
  return createClient({
    url: bed.url,
    username: bed.username,
    password: bed.password,
    log: { level: ClickHouseLogLevel.OFF },
    request_timeout: 300_000,
  });
}

/** The pipeline under test: firewall preset (plus kafka_line when the preset lacks it), integrity on. */
export function pipelineSpec(database: string, retention = '730d'): ResolvedSpec {
  const hasLine = FIREWALL_COLUMNS.some((c) => c.name === 'kafka_line');
  return resolved(
    {
      database,
      table: 'fw',
      retention: { deleteAfter: retention },
      columns: hasLine ? [] : [{ name: 'kafka_line', type: 'UInt32', source: 'kafka_line' }],
    },
    { integrity: { enabled: true, checkpointInterval: '1h' } },
  );
}

/** Creates the database and every table of the spec with the operator's DDL. */
export async function createTables(client: ClickHouseClient, spec: ResolvedSpec): Promise<TableDDL> {
  const ddl = buildTableDDL(spec);
  if (!ddl.ok) throw new Error(`${ddl.reason}: ${ddl.message}`);
  for (const sql of ddlStatements(ddl.value)) await client.command({ query: sql });
  return ddl.value;
}

const ACTIONS = ['allow', 'deny', 'drop', 'allow'];

/** One TSV value per column for row (partition, offset, line) at tsMs, by column name and type. */
function value(
  name: string,
  type: string,
  partition: number,
  offset: number,
  line: number,
  tsMs: number,
  ingestMs: number,
): string {
  const n = offset * 7 + line;
  switch (name) {
    case 'ts':
      return msText(tsMs);
    case 'ingest_ts':
      return msText(ingestMs);
    case 'src_ip':
      return n % 5 === 0
        ? `2001:db8::${(n % 65535).toString(16)}`
        : `10.${partition}.${(n >> 8) & 255}.${n & 255}`;
    case 'dst_ip':
      return n % 3 === 0 ? '8.8.8.8' : `192.0.2.${n % 256}`;
    case 'nat_src_ip':
      // CGNAT: a small public pool (IPv4 only), '::' (not translated) for IPv6 sources.
      return n % 5 === 0 ? '::' : `198.51.100.${n % 8}`;
    case 'nat_dst_ip':
      return '::';
    case 'sender_ip':
      // The syslog receiver's sending device (issue 16): a few firewalls, one of them IPv6.
      return n % 4 === 3 ? '2001:db8:f::1' : `192.0.2.${200 + (n % 3)}`;
    case 'action':
      return ACTIONS[n % ACTIONS.length];
    case 'raw':
      // Escaped tab and backslash: exercises the canonical string escaping end to end.
      return `<134>fw-01 line ${offset}/${line} src=10.${partition}.0.1 note=a\\tb\\\\c`;
    case 'kafka_partition':
      return String(partition);
    case 'kafka_offset':
      return String(offset);
    case 'kafka_line':
      return String(line);
    default:
      if (/Int\d+/.test(type)) return String(n % 60000);
      if (type.startsWith('DateTime')) return msText(tsMs);
      return `${name}-${n % 4}`;
  }
}

/** A worker-like batch: offsets [first, last], `linesPerMessage` rows each, timestamps from tsMs on. */
export interface BatchPlan {
  partition: number;
  first: number;
  last: number;
  linesPerMessage?: number;
  tsMs: number;
  insertedAtMs?: number;
}

/** The fixture's pipeline on the bed. */
export class CompliancePipeline {
  readonly spec: ResolvedSpec;
  readonly columns: Array<{ name: string; type: string; source?: string }>;
  readonly keys = generateKeyPairSync('ed25519');
  readonly publicKeyPem: string;
  private readonly salt = 'testsalt';

  constructor(
    readonly client: ClickHouseClient,
    readonly database: string,
    retention = '730d',
  ) {
    this.spec = pipelineSpec(database, retention);
    const ddl = buildTableDDL(this.spec);
    if (!ddl.ok) throw new Error(ddl.message);
    this.columns = buildWorkerColumns(ddl.value.tables[0].schema).map((c) => ({
      name: c.name,
      type: c.type,
      source: c.source,
    }));
    this.publicKeyPem = this.keys.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  }

  /** Drops and recreates the database with all tables. */
  async create(): Promise<void> {
    await this.client.command({ query: `DROP DATABASE IF EXISTS ${quoteIdentifier(this.database)}` });
    await createTables(this.client, this.spec);
  }

  /** A recorder as the worker builds it (signing key, optional TSA; the INSERT columns by default). */
  recorder(tsaUrl?: string, keyPem?: string, columns = this.columns): IntegrityRecorder {
    return new IntegrityRecorder({
      client: this.client,
      target: {
        database: this.database,
        integrityTable: 'fw_integrity',
        checkpointTable: 'fw_checkpoints',
        pipeline: 'isp/fw',
        table: 'fw',
      },
      columns,
      signingKeyPem: keyPem ?? this.keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      checkpointIntervalMs: 3_600_000,
      retentionMs: this.spec.clickhouse.retention.deleteAfterMs,
      tsaUrl,
    });
  }

  /** The TSV payload of a batch, as the encoder writes it. */
  payload(b: BatchPlan): Buffer {
    let out = '';
    const ingest = b.insertedAtMs ?? b.tsMs + 60_000;
    for (let o = b.first; o <= b.last; o++) {
      for (let line = 0; line < (b.linesPerMessage ?? 2); line++) {
        const ts = b.tsMs + (o - b.first) * 1000 + line;
        out +=
          this.columns.map((c) => value(c.name, c.type, b.partition, o, line, ts, ingest)).join('\t') + '\n';
      }
    }
    return Buffer.from(out);
  }

  /** Seals, inserts the rows with the batch token, then the link — the worker's sequence. */
  async insertBatch(recorder: IntegrityRecorder, b: BatchPlan): Promise<SealedBatch> {
    return this.insertPayload(recorder, b, this.payload(b));
  }

  /** The worker's sequence for a given payload (e.g. from the real encoder) and column list. */
  async insertPayload(
    recorder: IntegrityRecorder,
    b: BatchPlan,
    tsv: Buffer,
    columns: ReadonlyArray<{ name: string }> = this.columns,
  ): Promise<SealedBatch> {
    const token = batchToken('isp.fw', b.partition, b.first, b.last, this.salt);
    const insertedAtMs = b.insertedAtMs ?? b.tsMs + 60_000;
    const sealed = recorder.seal({
      partition: b.partition,
      firstOffset: b.first,
      lastOffset: b.last,
      insertedAtMs,
      batchToken: token,
      tsv,
    });
    if (typeof sealed === 'string') throw new Error(sealed);
    await this.client.insert({
      table: `${quoteIdentifier(this.database)}.\`fw\``,
      columns: columns.map((c) => quoteIdentifier(c.name)) as [string, ...string[]],
      values: Readable.from([tsv], { objectMode: false }),
      format: 'TabSeparated',
      clickhouse_settings: { insert_deduplication_token: token, insert_deduplicate: 1 },
    });
    await recorder.commit(sealed);
    return sealed;
  }

  /** Inserts TSV rows directly, as an intruder with INSERT rights would (no token, no link). */
  async insertRows(tsv: Buffer): Promise<void> {
    await this.client.insert({
      table: `${quoteIdentifier(this.database)}.\`fw\``,
      columns: this.columns.map((c) => quoteIdentifier(c.name)) as [string, ...string[]],
      values: Readable.from([tsv], { objectMode: false }),
      format: 'TabSeparated',
    });
  }

  /** A statement in this database (test tampering). */
  async sql(query: string): Promise<void> {
    await this.client.command({ query, clickhouse_settings: { mutations_sync: '2' } });
  }

  /** Rows of a SELECT as JSON objects. */
  async rows<T>(query: string): Promise<T[]> {
    return (await this.client.query({ query, format: 'JSONEachRow' })).json<T>();
  }
}

/**
 * Runs `logpipeline verify --output json` on the pipeline's `fw` table as a user would (public key
 * written to `dir`, credentials from the environment) with `args` appended; exit 2 throws.
 */
export async function verifyJson(
  p: { database: string; publicKeyPem: string },
  dir: string,
  args: string[],
): Promise<{ code: number; report: VerifyReport; text: string }> {
  const keyFile = path.join(dir, `${p.database}.pub`);
  fs.writeFileSync(keyFile, p.publicKeyPem);
  const bed = clickhouseBed();
  const chunks: Buffer[] = [];
  const out = new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c), cb()) });
  const env = { CLICKHOUSE_URL: bed.url, CLICKHOUSE_USER: bed.username, CLICKHOUSE_PASSWORD: bed.password };
  const base = ['--database', p.database, '--table', 'fw', '--public-key', keyFile, '--output', 'json'];
  const code = await runVerify([...base, ...args], out, env);
  const text = Buffer.concat(chunks).toString();
  if (code === 2) throw new Error(text);
  return { code, report: JSON.parse(text) as VerifyReport, text };
}
