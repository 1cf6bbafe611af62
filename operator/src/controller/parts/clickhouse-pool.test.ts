import type { ClickHouseClient } from '@clickhouse/client';
import { resolveSpec } from '../../api/defaults';
import type { LogPipeline } from '../../api/types';
import { silentLogger } from '../../../../common/src/log';
import { UNGUARDED } from '../../apply/guard';
import type { PartContext } from '../external';
import { ClickHousePool } from './clickhouse-pool';

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

const GRACE = 300_000;

describe('ClickHousePool clients of rotated credentials', () => {
  it('closes the client of the old user once no pipeline used it for the grace period', async () => {
    let t = 0;
    const pool = new ClickHousePool({}, () => t);
    const a = pipeline('a', 'ch');
    const b = pipeline('b', 'ch');
    const live = new Set(['a', 'b']);
    const v1 = { ch: { username: 'writer-1', password: 'p1' } };
    const v2 = { ch: { username: 'writer-2', password: 'p2' } };
    const old = watchClose(await pool.client(resolveSpec(a), ctx(a, v1)));
    await pool.client(resolveSpec(b), ctx(b, v1));
    await pool.catalogue(resolveSpec(a), ctx(a, v1));
    t = 1000;
    // The Secret now names another user: a second client, keyed by the new user.
    const fresh = watchClose(await pool.client(resolveSpec(a), ctx(a, v2)));
    expect(await pool.closeUnused(live, GRACE)).toEqual([]); // b is still on the old user
    await pool.client(resolveSpec(b), ctx(b, v2));
    expect(await pool.closeUnused(live, GRACE)).toEqual([]); // used a moment ago
    t = 1000 + GRACE;
    expect(await pool.closeUnused(live, GRACE)).toEqual(['http://ch:8123|writer-1']);
    expect(old.closed()).toBe(true);
    expect(fresh.closed()).toBe(false);
    const clients = (pool as unknown as { clients: Map<string, unknown> }).clients;
    expect([...clients.keys()]).toEqual(['http://ch:8123|writer-2']);
    // A later user of the old key gets a new client, and a catalogue reading through it.
    expect(await pool.client(resolveSpec(a), ctx(a, v1))).not.toBe(undefined);
    await pool.close();
  });

  it('closes the clients of deleted pipelines and keeps those shared with a live one', async () => {
    let t = 0;
    const pool = new ClickHousePool({}, () => t);
    const a = pipeline('a', 'ch');
    const gone = pipeline('gone', 'other');
    const secrets = {
      ch: { username: 'writer', password: 'p' },
      other: { username: 'other-writer', password: 'q' },
    };
    const shared = watchClose(await pool.client(resolveSpec(a), ctx(a, secrets)));
    const onlyGone = watchClose(await pool.client(resolveSpec(gone), ctx(gone, secrets)));
    t = GRACE;
    expect(await pool.closeUnused(new Set(['a']), GRACE)).toEqual(['http://ch:8123|other-writer']);
    expect(onlyGone.closed()).toBe(true);
    expect(shared.closed()).toBe(false);
    await pool.close();
  });
});
