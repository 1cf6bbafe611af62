/**
 * Destructive statements and leadership on the real bed (issue 11): a leader that lost its lease
 * must not run a DROP or delete a topic, even while it still believes it leads (before its next
 * renewal notices); the statement itself is cancelled through the guard's AbortSignal.
 */
import { createClient } from '@clickhouse/client';
import { Kafka, logLevel } from 'kafkajs';
import { resolveSpec } from '../operator/src/api/defaults';
import { dropTable, ensureTable } from '../operator/src/apply/clickhouse';
import { createClickHouseClient } from '../operator/src/apply/clickhouse-client';
import { LeadershipLostError, leaderGuard } from '../operator/src/apply/guard';
import { microTime } from '../operator/src/controller/leader';
import type { Manager } from '../operator/src/controller/manager';
import { registerExternalParts, type ExternalClients } from '../operator/src/controller/parts';
import {
  apis,
  condition,
  createNamespace,
  createPipeline,
  createSecret,
  deleteNamespace,
  deletePipeline,
  getPipeline,
  pipeline,
  startManager,
  waitFor,
} from './operator-harness';
import { readTestBed } from './env/testbed';

jest.setTimeout(120_000);

const bed = readTestBed();
const DB = 'guard_test';
const LEASE_NAME = 'logpipeline-operator';
// A long retry period: after a renewal, the leader believes it leads for ~20 s whatever happens.
const LEASE = { leaseDurationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 20_000 };
const kafka = new Kafka({ brokers: [bed.kafka!.bootstrap], logLevel: logLevel.NOTHING });
const admin = kafka.admin();
const ch = createClient({
  url: bed.clickhouse!.url,
  username: bed.clickhouse!.username,
  password: bed.clickhouse!.password,
});

let namespace: string;
let manager: Manager | undefined;
let external: ExternalClients | undefined;

async function tableExists(table: string): Promise<boolean> {
  const rs = await ch.query({
    query: 'SELECT count() AS n FROM system.tables WHERE database = {db:String} AND name = {t:String}',
    query_params: { db: DB, t: table },
    format: 'JSONEachRow',
  });
  return Number(((await rs.json()) as Array<{ n: string }>)[0].n) === 1;
}

beforeAll(async () => {
  await admin.connect();
  namespace = await createNamespace('guard');
  await createSecret(namespace, 'ch', {
    username: bed.clickhouse!.username,
    password: bed.clickhouse!.password,
  });
});

afterAll(async () => {
  await manager?.stop();
  await external?.close();
  await deleteNamespace(namespace);
  await admin.disconnect();
  await ch.close();
});

describe('a leader that lost its lease', () => {
  it('runs no DROP and deletes no topic for deletionPolicy Delete', async () => {
    manager = startManager(namespace, {
      identity: 'guarded',
      leaderElection: { namespace, name: LEASE_NAME, ...LEASE },
    });
    external = registerExternalParts(manager);
    await waitFor('leading', async () => manager!.isLeader(), 30_000);
    await createPipeline({
      ...pipeline(namespace, 'doomed'),
      spec: {
        kafka: { bootstrapServers: [bed.kafka!.bootstrap], topic: { name: 'guard.doomed', partitions: 1 } },
        clickhouse: {
          url: bed.clickhouse!.url,
          credentialsSecretRef: { name: 'ch' },
          database: DB,
          table: 'doomed',
        },
        deletionPolicy: 'Delete',
      } as never,
    });
    await waitFor(
      'doomed ready',
      async () => {
        const p = await getPipeline(namespace, 'doomed');
        return condition(p, 'TopicReady')?.status === 'True' && condition(p, 'TableReady')?.status === 'True';
      },
      60_000,
    );
    // Wait for a renewal, then take the lease at once: the manager keeps believing it leads until
    // its next renewal, ~20 s later, and the deletion below is reconciled inside that window.
    const { coordination } = apis();
    const before = await coordination.readNamespacedLease({ namespace, name: LEASE_NAME });
    const renewed = await waitFor(
      'a lease renewal',
      async () => {
        const l = await coordination.readNamespacedLease({ namespace, name: LEASE_NAME });
        return String(l.spec?.renewTime) !== String(before.spec?.renewTime) ? l : undefined;
      },
      LEASE.retryPeriodMs * 2,
    );
    const now = microTime(Date.now());
    await coordination.replaceNamespacedLease({
      namespace,
      name: LEASE_NAME,
      body: {
        ...renewed,
        spec: {
          ...renewed.spec,
          holderIdentity: 'usurper',
          leaseDurationSeconds: 3600,
          acquireTime: now as never,
          renewTime: now as never,
        },
      },
    });
    await deletePipeline(namespace, 'doomed');
    const refused = await waitFor(
      'LeadershipLost event',
      async () => {
        const events = await apis().core.listNamespacedEvent({ namespace });
        return events.items.find((e) => e.reason === 'LeadershipLost');
      },
      LEASE.retryPeriodMs,
    );
    expect(refused.message).toContain('no longer holds the leader lease');
    expect(await tableExists('doomed')).toBe(true);
    expect(await admin.listTopics()).toContain('guard.doomed');
    // The next renewal sees the usurper and stops leading; still nothing was deleted.
    await waitFor('stopped leading', async () => !manager!.isLeader(), LEASE.retryPeriodMs * 2);
    expect(await tableExists('doomed')).toBe(true);
    expect(await admin.listTopics()).toContain('guard.doomed');
    expect((await getPipeline(namespace, 'doomed'))?.metadata.finalizers).toContain(
      'logpipeline.io/external-resources',
    );
  });
});

describe('the guard of a DROP', () => {
  const owner = { namespace: 'guard', name: 'direct', uid: '0d7c3f4e-0000-4000-8000-00000000abcd' };
  const spec = resolveSpec({
    ...pipeline('guard', 'direct'),
    spec: {
      kafka: { bootstrapServers: [bed.kafka!.bootstrap] },
      clickhouse: { url: bed.clickhouse!.url, database: DB, table: 'direct' },
    } as never,
  });

  it('refuses the DROP when the lease check fails, and cancels it when the signal is aborted', async () => {
    const client = createClickHouseClient({
      url: bed.clickhouse!.url,
      username: bed.clickhouse!.username,
      password: bed.clickhouse!.password,
    });
    try {
      const created = await ensureTable(client, spec, { owner, adopt: false });
      expect(created.ready).toBe(true);
      // The owner check reads, it never writes: a steady pipeline still sends zero statements.
      expect((await ensureTable(client, spec, { owner, adopt: false })).applied).toEqual([]);
      const lost = leaderGuard(new AbortController().signal, async () => false);
      await expect(dropTable(client, spec, created.identity!, { owner, guard: lost })).rejects.toBeInstanceOf(
        LeadershipLostError,
      );
      expect(await tableExists('direct')).toBe(true);
      // The lease check passes, but the term already ended: the statement is cancelled, not sent.
      const ended = new AbortController();
      ended.abort();
      const stale = { signal: ended.signal, confirm: async () => undefined };
      await expect(dropTable(client, spec, created.identity!, { owner, guard: stale })).rejects.toThrow();
      expect(await tableExists('direct')).toBe(true);
      const ok = leaderGuard(new AbortController().signal, async () => true);
      expect(await dropTable(client, spec, created.identity!, { owner, guard: ok })).toMatchObject({
        dropped: true,
        reason: 'TablesDropped',
      });
      expect(await tableExists('direct')).toBe(false);
    } finally {
      await client.close();
    }
  });
});
