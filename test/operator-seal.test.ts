/**
 * The operator's scheduled daily seal (spec.integrity.seal) on the real bed: a pipeline whose table
 * has rows on a past day gets that day sealed (signed with the key from its Secret, timestamped by a
 * TSA that requires basic auth and a client certificate, credentials from a Secret), reports it in
 * the Sealed condition, status.seal and an Event (days in the pipeline's time zone), never seals today (incomplete) nor a day twice,
 * reports a TSA failure as Sealed=False + Warning Event without leaking the password, recovers when
 * the Secret is fixed — and the stored seal, exported, verifies with openssl alone.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { IntegrityRecorder } from '../consumer/src/integrity';
import type { Manager } from '../operator/src/controller/manager';
import { registerExternalParts, type ExternalClients } from '../operator/src/controller/parts';
import { runSeal } from '../operator/cli/seal';
import { bedClient, clickhouseBed, CompliancePipeline, type BatchPlan } from './compliance-fixture';
import { startTsa, type TsaServer } from './env/tsa';
import { readTestBed } from './env/testbed';
import {
  apis,
  condition,
  createNamespace,
  createPipeline,
  createSecret,
  deleteNamespace,
  getPipeline,
  patchPipelineSpec,
  pipeline,
  startManager,
  waitFor,
} from './operator-harness';
import { audit } from './seal-audit';

const DAY = 86_400_000;
const RUN = `${process.pid}_${Date.now() % 1e6}`;
const DB = `opseal_${RUN}`;
const TWO_AGO = Math.floor((Date.now() - 2 * DAY) / DAY) * DAY;
const DAY_A = new Date(TWO_AGO).toISOString().slice(0, 10);
const DAY_B = new Date(TWO_AGO - DAY).toISOString().slice(0, 10);
const creds = { username: 'sealer', password: 'Op-Tsa-Pa55' };

let client: ClickHouseClient;
let tsa: TsaServer;
let namespace: string;
let manager: Manager;
let external: ExternalClients;
let p: CompliancePipeline;
let rec: IntegrityRecorder;
let dir: string;

const batch = (partition: number, first: number, tsMs: number): BatchPlan => ({
  partition,
  first,
  last: first + 4,
  tsMs,
});

async function sealRows(day: string): Promise<number> {
  const rs = await client.query({
    query: `SELECT count() AS n FROM \`${DB}\`.fw_seals WHERE day = {d:String}`,
    query_params: { d: day },
    format: 'JSONEachRow',
  });
  return Number((await rs.json<{ n: string }>())[0].n);
}

async function events(reason: string): Promise<string[]> {
  const list = await apis().core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.name=fw' });
  return list.items.filter((e) => e.reason === reason).map((e) => e.message ?? '');
}

beforeAll(async () => {
  client = bedClient();
  tsa = await startTsa({ name: 'op-locked', mtls: true, basicAuth: creds });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opseal-'));
  namespace = await createNamespace('opseal');
  // The tables first, with the operator's own DDL (same spec), so rows of past days exist when the
  // pipeline appears: the operator finds the tables matching and changes nothing.
  p = new CompliancePipeline(client, DB);
  await p.create();
  rec = new IntegrityRecorder({
    client,
    target: {
      database: DB,
      integrityTable: 'fw_integrity',
      checkpointTable: 'fw_checkpoints',
      pipeline: `${namespace}/fw`,
      table: 'fw',
    },
    columns: p.columns,
    signingKeyPem: p.keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    checkpointIntervalMs: 3_600_000,
  });
  await rec.assign([0, 1]);
  await p.insertBatch(rec, batch(0, 0, TWO_AGO + 3_600_000));
  await p.insertBatch(rec, batch(1, 0, TWO_AGO + 7_200_000));
  await p.insertBatch(rec, batch(0, 5, Date.now() - 60_000)); // today: never sealed (incomplete)
  await rec.checkpointNow();
  const bed = clickhouseBed();
  await createSecret(namespace, 'ch', { username: bed.username, password: bed.password });
  await createSecret(namespace, 'signing', {
    'ed25519.pem': p.keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  });
  await createSecret(namespace, 'tsa', {
    ...creds,
    'tls.crt': tsa.clientCertPem!,
    'tls.key': tsa.clientKeyPem!,
    'ca.crt': tsa.caCertPem,
  });
  manager = startManager(namespace);
  external = registerExternalParts(manager, { seal: { pollMs: 300, retryDelayMs: 1_000 } });
}, 120_000);

afterAll(async () => {
  await manager?.stop();
  await external?.close();
  await rec?.stop();
  await deleteNamespace(namespace);
  await client?.command({ query: `DROP DATABASE IF EXISTS \`${DB}\`` });
  await client?.close();
  await tsa?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a past day with rows is sealed by the operator and verifies with openssl alone', async () => {
  const bed = clickhouseBed();
  const hasLine = p.columns.some((c) => c.name === 'kafka_line');
  // The fixture wrote the day's rows into tables it created itself: the pipeline adopts them explicitly.
  const lpObj = pipeline(namespace, 'fw', {
    kafka: { bootstrapServers: [readTestBed().kafka!.bootstrap] },
    clickhouse: {
      url: bed.url,
      credentialsSecretRef: { name: 'ch' },
      database: DB,
      table: 'fw',
      retention: { deleteAfter: '730d' },
      ...(hasLine ? {} : { columns: [{ name: 'kafka_line', type: 'UInt32', source: 'kafka_line' }] }),
    },
    integrity: {
      enabled: true,
      signingKeySecretRef: { name: 'signing', key: 'ed25519.pem' },
      checkpointInterval: '1h',
      tsaUrl: tsa.url,
      tsaCredentialsSecretRef: { name: 'tsa' },
      seal: { schedule: 'daily', grace: '1h', backfillDays: 7, timeZone: 'Europe/Istanbul' },
    },
  } as never);
  lpObj.metadata.annotations = { 'logpipeline.io/adopt': 'true' };
  await createPipeline(lpObj);
  const lp = await waitFor(
    `Sealed=True through ${DAY_A}`,
    async () => {
      const cur = await getPipeline(namespace, 'fw');
      return condition(cur, 'Sealed')?.status === 'True' && cur?.status?.seal?.lastSealedDay === DAY_A
        ? cur
        : undefined;
    },
    90_000,
  );
  expect(condition(lp, 'TableReady')?.status).toBe('True');
  expect(condition(lp, 'Sealed')?.message).toBe(`days through ${DAY_A} are sealed`);
  expect(await sealRows(DAY_A)).toBe(1);
  expect(await sealRows(new Date().toISOString().slice(0, 10))).toBe(0);
  await waitFor('DaySealed event', async () => (await events('DaySealed')).find((m) => m.includes(DAY_A)));

  // The stored seal, exported as files, passes the auditor's procedure with openssl.
  const pub = path.join(dir, 'pub.pem');
  fs.writeFileSync(pub, p.publicKeyPem);
  const out = path.join(dir, 'export');
  const chunks: Buffer[] = [];
  const code = await runSeal(
    ['export', '--database', DB, '--table', 'fw', '--date', DAY_A, '--out', out],
    new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c), cb()) }),
    { CLICKHOUSE_URL: bed.url, CLICKHOUSE_USER: bed.username, CLICKHOUSE_PASSWORD: bed.password },
  );
  expect(Buffer.concat(chunks).toString()).not.toContain('MODIFIED');
  expect(code).toBe(0);
  const manifest = JSON.parse(fs.readFileSync(path.join(out, `fw-${DAY_A}.manifest.json`), 'utf8'));
  // Istanbul days (UTC+3) start at 21:00 UTC the evening before.
  expect(manifest).toMatchObject({ time_zone: 'Europe/Istanbul', from_ms: TWO_AGO - 3 * 3_600_000 });
  expect(manifest.export.rows).toBe(20);
  const audited = audit(out, `fw-${DAY_A}`, pub, tsa.caCertFile);
  expect(audited.out).toContain('Verification: OK');
  expect(audited.out).toContain(`seal fw-${DAY_A}: OK`);
  expect(audited.code).toBe(0);
}, 150_000);

test('a TSA failure is Sealed=False with a Warning Event (no password), and recovers when the Secret is fixed', async () => {
  // A new unsealed past day, and credentials the TSA refuses.
  await p.insertBatch(rec, batch(1, 5, TWO_AGO - DAY + 3_600_000));
  await apis().core.replaceNamespacedSecret({
    namespace,
    name: 'tsa',
    body: {
      metadata: { name: 'tsa' },
      stringData: {
        ...creds,
        password: 'Wrong-Pa55',
        'tls.crt': tsa.clientCertPem!,
        'tls.key': tsa.clientKeyPem!,
        'ca.crt': tsa.caCertPem,
      },
    },
  });
  await patchPipelineSpec(namespace, 'fw', {
    integrity: { seal: { schedule: 'daily', grace: '1h', backfillDays: 8, timeZone: 'Europe/Istanbul' } },
  });
  const failed = await waitFor(
    'Sealed=False TimestampFailed',
    async () => {
      const cur = await getPipeline(namespace, 'fw');
      return condition(cur, 'Sealed')?.reason === 'TimestampFailed' ? cur : undefined;
    },
    60_000,
  );
  const cond = condition(failed, 'Sealed')!;
  expect(cond.status).toBe('False');
  expect(cond.message).toContain(`sealing ${DAY_B} failed`);
  expect(cond.message).toContain('TSA refused the credentials (HTTP 401)');
  expect(JSON.stringify(failed?.status)).not.toContain('Wrong-Pa55');
  const warnings = await waitFor('TimestampFailed event', async () => {
    const found = await events('TimestampFailed');
    return found.length > 0 ? found : undefined;
  });
  expect(warnings.join('\n')).not.toContain('Wrong-Pa55');
  expect(await sealRows(DAY_B)).toBe(0);

  await apis().core.replaceNamespacedSecret({
    namespace,
    name: 'tsa',
    body: {
      metadata: { name: 'tsa' },
      stringData: {
        ...creds,
        'tls.crt': tsa.clientCertPem!,
        'tls.key': tsa.clientKeyPem!,
        'ca.crt': tsa.caCertPem,
      },
    },
  });
  await waitFor(
    `${DAY_B} sealed after the fix`,
    async () => {
      const cur = await getPipeline(namespace, 'fw');
      return condition(cur, 'Sealed')?.status === 'True' && (await sealRows(DAY_B)) === 1;
    },
    60_000,
  );
  // Idempotent: neither day was sealed twice across all these reconciles.
  expect(await sealRows(DAY_A)).toBe(1);
  expect(await sealRows(DAY_B)).toBe(1);
  expect((await getPipeline(namespace, 'fw'))?.status?.seal?.lastSealedDay).toBe(DAY_A);
}, 150_000);

test('removing spec.integrity.seal removes the Sealed condition and status.seal; the stored seals stay', async () => {
  // A merge patch with null deletes the field: the pipeline no longer has a scheduled seal.
  await patchPipelineSpec(namespace, 'fw', { integrity: { seal: null } });
  const cleared = await waitFor(
    'Sealed condition and status.seal gone',
    async () => {
      const cur = await getPipeline(namespace, 'fw');
      const current = cur?.metadata?.generation === cur?.status?.observedGeneration;
      return current && !condition(cur, 'Sealed') && cur?.status?.seal === undefined ? cur : undefined;
    },
    60_000,
  );
  expect(cleared.spec.integrity?.seal).toBeUndefined();
  expect(condition(cleared, 'Ready')).toBeDefined();
  // Evidence is never deleted with the schedule.
  expect(await sealRows(DAY_A)).toBe(1);
  expect(await sealRows(DAY_B)).toBe(1);
}, 90_000);
