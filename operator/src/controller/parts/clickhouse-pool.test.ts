import type { ClickHouseClient } from '@clickhouse/client';
import { resolveSpec, type ResolvedSpec } from '../../api/defaults';
import type { LogPipeline } from '../../api/types';
import { silentLogger } from '../../../../common/src/log';
import { UNGUARDED } from '../../apply/guard';
import type { PartContext } from '../external';
import { ClickHousePool } from './table-part';

function pipeline(uid: string, secret: string): LogPipeline {
  return {
    apiVersion: 'logpipeline.io/v1alpha1',
    kind: 'LogPipeline',
    metadata: { name: `p-${uid}`, namespace: 'ns', uid },
    spec: {
      kafka: { bootstrapServers: ['k:9092'], topic: { name: `t-${uid}` } },
      clickhouse: {
        url: 'http://ch:8123',
        database: 'logs',
        table: `t_${uid}`,
        credentialsSecretRef: { name: secret },
      },
    },
  } as LogPipeline;
}

/** The pipeline's context; its Secrets are `secrets[name]` (username/password keys). */
function ctx(lp: LogPipeline, secrets: Record<string, Record<string, string>>): PartContext {
  return {
    pipeline: lp,
    readSecretKey: async (name, key) => secrets[name]?.[key],
    log: silentLogger,
    guard: UNGUARDED,
    pipelines: () => [],
  };
}

/** Marks a pool's client so a test sees when it is closed. */
function watchClose(client: ClickHouseClient): { closed: () => boolean } {
  let closed = false;
  const close = client.close.bind(client);
  client.close = async () => {
    closed = true;
    await close();
  };
  return { closed: () => closed };
}

describe('ClickHousePool clients of rotated credentials', () => {
  it('keeps the client of the old user after a rotation to a new user (the leak)', async () => {
    const pool = new ClickHousePool();
    const lp = pipeline('u1', 'ch');
    const spec: ResolvedSpec = resolveSpec(lp);
    const old = watchClose(
      await pool.client(spec, ctx(lp, { ch: { username: 'writer-1', password: 'p1' } })),
    );
    // The Secret now names another user: a second client, keyed by the new user.
    await pool.client(spec, ctx(lp, { ch: { username: 'writer-2', password: 'p2' } }));
    expect(old.closed()).toBe(false);
    // Nothing ever closes it: the only closer is the operator's shutdown, so both stay open.
    const clients = (pool as unknown as { clients: Map<string, unknown> }).clients;
    expect([...clients.keys()]).toEqual(['http://ch:8123|writer-1', 'http://ch:8123|writer-2']);
    await pool.close();
  });
});
