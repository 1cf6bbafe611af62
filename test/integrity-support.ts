/**
 * Set-up shared by the worker-level tamper-evidence tests (worker-integrity, worker-backfill-
 * integrity, worker-rebalance-integrity): a pipeline with integrity on, its tables built with the
 * operator's DDL and its topics, an Ed25519 key pair, a worker holding the signing key, and
 * `logpipeline verify` on a table as JSON.
 */
import { generateKeyPairSync, type KeyPairKeyObjectResult } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { runVerify } from '../operator/cli/verify';
import type { ResolvedSpec } from '../operator/src/api/defaults';
import type { LogPipeline, LogPipelineSpec } from '../operator/src/api/types';
import type { VerifyReport } from '../operator/src/compliance/verify-report';
import { buildTableDDL, buildWorkerColumns, ddlStatements } from '../operator/src/desired/clickhouse';
import { buildWorkerConfig } from '../operator/src/desired/configmap';
import { SECRET_ENV, type WorkerConfig } from '../common/src/worker-config';
import { bedScratchDir, type TestBed } from './env/testbed';
import { kafkaClient, spawnWorker, type WorkerProcess } from './worker-support';

/** What differs between the integrity tests' pipelines. */
export interface IntegrityPipelineOptions {
  partitions: number;
  batch: NonNullable<NonNullable<LogPipelineSpec['workers']>['batch']>;
  tsaUrl?: string;
  /** Leave out to keep the default (dead letters on). */
  deadLetter?: LogPipelineSpec['deadLetter'];
}

/** A pipeline `fw` in database `id`, topic `lp.<id>`, tamper evidence on (1 s checkpoints). */
export function integrityPipeline(bed: TestBed, id: string, o: IntegrityPipelineOptions): LogPipeline {
  return {
    apiVersion: 'logpipeline.io/v1alpha1',
    kind: 'LogPipeline',
    metadata: { name: 'fw', namespace: 'compliance', uid: `uid-${id}` },
    spec: {
      kafka: {
        bootstrapServers: [bed.kafka!.bootstrap],
        topic: { name: `lp.${id}`, partitions: o.partitions },
      },
      clickhouse: { url: bed.clickhouse!.url, database: id, table: 'fw' },
      workers: { batch: o.batch },
      integrity: {
        enabled: true,
        signingKeySecretRef: { name: 'key', key: 'ed25519.pem' },
        checkpointInterval: '1s',
        ...(o.tsaUrl ? { tsaUrl: o.tsaUrl } : {}),
      },
      ...(o.deadLetter ? { deadLetter: o.deadLetter } : {}),
    },
  };
}

/** Creates the tables with the operator's DDL. */
export async function createIntegrityTables(ch: ClickHouseClient, spec: ResolvedSpec): Promise<void> {
  const ddl = buildTableDDL(spec);
  if (!ddl.ok) throw new Error(ddl.message);
  for (const query of ddlStatements(ddl.value)) await ch.command({ query });
}

/** Creates the topics (name and partitions). */
export async function createTopics(
  bed: TestBed,
  topics: Array<{ topic: string; numPartitions: number }>,
): Promise<void> {
  const admin = kafkaClient(bed).admin();
  await admin.connect();
  await admin.createTopics({ topics });
  await admin.disconnect();
}

/** The worker config the operator would render for `spec`. */
export function integrityWorkerConfig(spec: ResolvedSpec): WorkerConfig {
  const ddl = buildTableDDL(spec);
  if (!ddl.ok) throw new Error(ddl.message);
  return buildWorkerConfig(spec, buildWorkerColumns(ddl.value.tables[0].schema));
}

/** An Ed25519 key pair and its public key written to `<tmp dir>/key.pub`. */
export function signingKeys(prefix: string): {
  keys: KeyPairKeyObjectResult;
  dir: string;
  publicKeyFile: string;
} {
  const keys = generateKeyPairSync('ed25519');
  const dir = bedScratchDir(prefix);
  const publicKeyFile = path.join(dir, 'key.pub');
  fs.writeFileSync(publicKeyFile, keys.publicKey.export({ type: 'spki', format: 'pem' }));
  return { keys, dir, publicKeyFile };
}

/** Spawns a worker holding the private key (in its environment only while it is spawned). */
export function spawnSigningWorker(
  bed: TestBed,
  keys: KeyPairKeyObjectResult,
  cfg: WorkerConfig,
  port: number,
  tag: string,
): WorkerProcess {
  process.env[SECRET_ENV.signingKey] = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  try {
    return spawnWorker(bed, cfg, port, tag);
  } finally {
    delete process.env[SECRET_ENV.signingKey];
  }
}

/** A single number a query returns as column `n`. */
export async function scalar(ch: ClickHouseClient, query: string): Promise<number> {
  const rows = await (await ch.query({ query, format: 'JSONEachRow' })).json<{ n: string }>();
  return Number(rows[0].n);
}

/**
 * `logpipeline verify --all --output json` on `<id>.<table>`; the ClickHouse credentials go as
 * flags, or (`credentials: 'env'`) through the CLI's environment variables.
 */
export async function verifyTable(
  bed: TestBed,
  id: string,
  table: string,
  publicKeyFile: string,
  credentials: 'flags' | 'env' = 'flags',
): Promise<{ code: number; report: VerifyReport }> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const ch = bed.clickhouse!;
  const flags = ['--clickhouse-url', ch.url, '--user', ch.username, '--password', ch.password];
  const args = [
    '--database',
    id,
    '--table',
    table,
    '--all',
    '--public-key',
    publicKeyFile,
    '--output',
    'json',
  ];
  const env = { CLICKHOUSE_URL: ch.url, CLICKHOUSE_USER: ch.username, CLICKHOUSE_PASSWORD: ch.password };
  const code =
    credentials === 'env' ? await runVerify(args, out, env) : await runVerify([...flags, ...args], out);
  return { code, report: JSON.parse(Buffer.concat(chunks).toString('utf8')) as VerifyReport };
}
