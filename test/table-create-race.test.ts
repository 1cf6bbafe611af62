/**
 * Exclusive table creation on a single server (issue 18): ensureTable sends CREATE TABLE without
 * IF NOT EXISTS and neither probes the server's table list before nor rechecks it after. The
 * ownership doctrine must hold all the same on the real bed: a table someone else created behind
 * the catalogue's back fails our CREATE and ends as a Conflict naming its owner (never adopted,
 * never altered), and two creators racing for one table never both end Ready.
 */
import { createClient } from '@clickhouse/client';
import { resolveSpec } from '../operator/src/api/defaults';
import { ensureTable } from '../operator/src/apply/clickhouse';
import { ClickHouseCatalogue } from '../operator/src/apply/clickhouse-catalogue';
import { createClickHouseClient, queryRows } from '../operator/src/apply/clickhouse-client';
import { parseOwnerComment, type Owner } from '../operator/src/desired/ownership';
import { pipeline } from './operator-harness';
import { readTestBed } from './env/testbed';

const bed = readTestBed();
const DB = 'create_race';
const conn = {
  url: bed.clickhouse!.url,
  username: bed.clickhouse!.username,
  password: bed.clickhouse!.password,
};
const client = createClickHouseClient(conn);
const ch = createClient(conn);

function specOf(owner: Owner, table: string) {
  const lp = {
    ...pipeline(owner.namespace, owner.name),
    spec: {
      kafka: { bootstrapServers: ['localhost:9092'], topic: { name: `race.${table}`, partitions: 1 } },
      clickhouse: { url: bed.clickhouse!.url, database: DB, table },
    } as never,
  };
  return resolveSpec(lp);
}

const owner = (name: string, n: number): Owner => ({
  namespace: 'race',
  name,
  uid: `5e4d3c2b-0000-4000-8000-00000000010${n}`,
});

/** A catalogue of the bed's server, as the operator's pool builds one. */
const catalogue = () => new ClickHouseCatalogue((query, params) => queryRows(client, query, params));

/** Owner uid recorded on each table of `prefix` (its name or a companion), by table name. */
async function ownersOf(prefix: string): Promise<Map<string, string | undefined>> {
  const rs = await ch.query({
    query:
      'SELECT name, comment FROM system.tables WHERE database = {db:String} AND (name = {t:String} OR startsWith(name, {p:String}))',
    query_params: { db: DB, t: prefix, p: `${prefix}_` },
    format: 'JSONEachRow',
  });
  const rows = (await rs.json()) as Array<{ name: string; comment: string }>;
  return new Map(rows.map((r) => [r.name, parseOwnerComment(r.comment)?.uid]));
}

afterAll(async () => {
  await client.command({ query: `DROP DATABASE IF EXISTS ${DB}` });
  await client.close();
  await ch.close();
});

describe('exclusive CREATE TABLE on a single server', () => {
  it('creates with plain CREATE TABLE and records the owner, with no table-list probe', async () => {
    const a = owner('alone', 1);
    const cat = catalogue();
    await cat.snapshot([DB]);
    const out = await ensureTable(client, specOf(a, 'alone'), { owner: a, adopt: false }, cat);
    expect(out).toMatchObject({ ready: true, reason: 'TableReady' });
    const creates = out.applied.filter((s) => s.startsWith('CREATE TABLE'));
    expect(creates.length).toBeGreaterThanOrEqual(2);
    for (const sql of creates) expect(sql).not.toContain('IF NOT EXISTS');
    expect(cat.probeCount()).toBe(0);
    const owners = await ownersOf('alone');
    expect(owners.size).toBe(creates.length);
    for (const uid of owners.values()) expect(uid).toBe(a.uid);
    // Once our own statements are read back, a second ensure changes nothing.
    expect((await ensureTable(client, specOf(a, 'alone'), { owner: a, adopt: false }, cat)).applied).toEqual(
      [],
    );
  });

  it('ends in Conflict when the table was created behind the catalogue and leaves it untouched', async () => {
    const first = owner('first', 2);
    const late = owner('late', 3);
    const cat = catalogue();
    // The late pipeline's catalogue reads the server before the first pipeline creates the table.
    await cat.snapshot([DB]);
    expect(await ensureTable(client, specOf(first, 'behind'), { owner: first, adopt: false })).toMatchObject({
      ready: true,
    });
    const before = await ownersOf('behind');
    const out = await ensureTable(client, specOf(late, 'behind'), { owner: late, adopt: false }, cat);
    expect(out).toMatchObject({ ready: false, reason: 'Conflict' });
    expect(out.message).toContain(first.uid);
    // The failed exclusive CREATE sent it down the careful path, which read the table's record.
    expect(cat.probeCount()).toBeGreaterThan(0);
    expect(out.applied.filter((s) => s.includes('`behind'))).toEqual([]);
    expect(await ownersOf('behind')).toEqual(before);
    for (const uid of before.values()) expect(uid).toBe(first.uid);
  });

  it('lets at most one of two racing creators end Ready, and every table keeps one owner', async () => {
    const racers = [owner('red', 4), owner('blue', 5)];
    const cats = racers.map(() => catalogue());
    await Promise.all(cats.map((c) => c.snapshot([DB])));
    const outs = await Promise.all(
      racers.map((o, i) => ensureTable(client, specOf(o, 'contested'), { owner: o, adopt: false }, cats[i])),
    );
    const ready = outs.filter((o) => o.ready);
    expect(ready.length).toBeLessThanOrEqual(1);
    for (const o of outs) if (!o.ready) expect(o.reason).toBe('Conflict');
    const owners = await ownersOf('contested');
    expect(owners.size).toBeGreaterThanOrEqual(2);
    for (const uid of owners.values()) expect(racers.map((r) => r.uid)).toContain(uid);
    // The winner (if any) owns every table it reported ready on.
    const winner = racers[outs.findIndex((o) => o.ready)];
    if (winner) for (const uid of owners.values()) expect(uid).toBe(winner.uid);
  });
});
