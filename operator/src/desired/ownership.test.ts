import type { LogPipeline } from '../api/types';
import { buildTableDDL } from './clickhouse';
import { resolved } from '../../../test/fixtures/clickhouse-testing';
import {
  ADOPT_ANNOTATION,
  judgeClaim,
  ownerOf,
  ownerRecord,
  ownerRecordDate,
  ownerRecordStale,
  parseOwnerComment,
  wantsAdoption,
} from './ownership';

const me = { namespace: 'logs', name: 'firewall', uid: '6f1c2a3b-1111-4222-8333-444455556666' };
const other = { namespace: 'tenant-b', name: 'intruder', uid: '0a0b0c0d-1111-4222-8333-444455556666' };
const none = { adopt: false, legacy: false };

describe('owner records', () => {
  it('round-trips a record', () => {
    const text = ownerRecord(me);
    expect(text).toBe('logpipeline.io/owner=v1:logs/firewall/6f1c2a3b-1111-4222-8333-444455556666');
    expect(parseOwnerComment(text)).toEqual(me);
    expect(parseOwnerComment(`  ${text}\n`)).toEqual(me);
  });

  it('ignores foreign comments, other versions and malformed records', () => {
    for (const text of [
      '',
      undefined,
      null,
      'firewall logs of site A',
      'logpipeline.io/owner=v2:logs/firewall/uid',
      'logpipeline.io/owner=v1:logs/firewall',
      'logpipeline.io/owner=v1:Logs/fire wall/uid',
      "logpipeline.io/owner=v1:logs/firewall/uid'; DROP TABLE x",
    ]) {
      expect(parseOwnerComment(text)).toBeUndefined();
    }
  });

  it('reads owner and adoption from a pipeline object', () => {
    const lp = {
      metadata: {
        namespace: 'logs',
        name: 'firewall',
        uid: me.uid,
        annotations: { [ADOPT_ANNOTATION]: 'true' },
      },
    } as unknown as LogPipeline;
    expect(ownerOf(lp)).toEqual(me);
    expect(wantsAdoption(lp)).toBe(true);
    expect(wantsAdoption({ metadata: { annotations: { [ADOPT_ANNOTATION]: 'yes' } } } as never)).toBe(false);
  });
});

describe('judgeClaim', () => {
  it('proceeds on its own record', () => {
    expect(judgeClaim(ownerRecord(me), me, 'table logs.fw', none)).toEqual({ kind: 'owned' });
  });

  it("refuses another pipeline's thing, naming the owner, even when asked to adopt", () => {
    for (const opts of [none, { adopt: true, legacy: true }]) {
      const v = judgeClaim(ownerRecord(other), me, 'table logs.fw', opts);
      expect(v).toMatchObject({ kind: 'conflict', owner: other });
      expect(v.kind === 'conflict' && v.message).toContain('owned by LogPipeline tenant-b/intruder');
    }
  });

  it('adopts an unowned thing only when asked (or for its own legacy record)', () => {
    expect(judgeClaim('', me, 'table logs.fw', none)).toMatchObject({ kind: 'conflict' });
    expect(judgeClaim('hand-made', me, 'table logs.fw', none)).toMatchObject({
      kind: 'conflict',
      message: expect.stringContaining('no owner record'),
    });
    expect(judgeClaim('', me, 't', { adopt: true, legacy: false })).toEqual({
      kind: 'stamp',
      why: 'adopted',
    });
    expect(judgeClaim(undefined, me, 't', { adopt: false, legacy: true })).toEqual({
      kind: 'stamp',
      why: 'legacy',
    });
  });

  it('treats an earlier incarnation of the same namespace/name as adoptable, never implicitly', () => {
    const earlier = ownerRecord({ ...me, uid: '99999999-1111-4222-8333-444455556666' });
    expect(judgeClaim(earlier, me, 't', { adopt: false, legacy: true })).toMatchObject({
      kind: 'conflict',
      message: expect.stringContaining('earlier LogPipeline logs/firewall'),
    });
    expect(judgeClaim(earlier, me, 't', { adopt: true, legacy: false })).toEqual({
      kind: 'stamp',
      why: 'adopted',
    });
  });
});

describe('buildTableDDL with an owner', () => {
  it('puts the owner record as COMMENT on every CREATE TABLE', () => {
    const r = buildTableDDL(resolved({}), ownerRecord(me));
    if (!r.ok) throw new Error(r.message);
    for (const t of r.value.tables) {
      expect(t.create[0].endsWith(`\nCOMMENT '${ownerRecord(me)}'`)).toBe(true);
    }
  });

  it('adds the COMMENT to both the local and the Distributed table in cluster mode', () => {
    const r = buildTableDDL(resolved({ cluster: 'c1' }), ownerRecord(me));
    if (!r.ok) throw new Error(r.message);
    expect(r.value.tables[0].create).toHaveLength(2);
    for (const sql of r.value.tables[0].create) expect(sql).toContain(`COMMENT '${ownerRecord(me)}'`);
  });

  it('builds no COMMENT without an owner (offline plan)', () => {
    const r = buildTableDDL(resolved({}));
    expect(r.ok && r.value.tables[0].create[0]).not.toContain('COMMENT');
  });
});

describe('dated topic owner records', () => {
  const me = { namespace: 'logs', name: 'firewall', uid: '6f1c2a3b-1111-4222-8333-444455556666' };
  it('writes and parses the date; undated records still parse', () => {
    const text = ownerRecord(me, new Date('2026-12-03T17:00:00Z'));
    expect(text).toBe(
      'logpipeline.io/owner=v1:logs/firewall/6f1c2a3b-1111-4222-8333-444455556666@2026-12-03',
    );
    expect(parseOwnerComment(text)).toEqual(me);
    expect(ownerRecordDate(text)).toBe(Date.parse('2026-12-03T00:00:00Z'));
    expect(ownerRecordDate(ownerRecord(me))).toBeUndefined();
    expect(parseOwnerComment(`${ownerRecord(me)}@2026-13`)).toBeUndefined();
  });
  it('is stale when missing, undated or older than a day', () => {
    const now = Date.parse('2026-12-04T12:00:00Z');
    expect(ownerRecordStale(undefined, now)).toBe(true);
    expect(ownerRecordStale(ownerRecord(me), now)).toBe(true);
    expect(ownerRecordStale(ownerRecord(me, new Date('2026-12-04T01:00:00Z')), now)).toBe(false);
    // The date has a day's granularity: a record of yesterday is renewed today, i.e. at most daily.
    expect(ownerRecordStale(ownerRecord(me, new Date('2026-12-03T23:00:00Z')), now)).toBe(true);
    expect(ownerRecordStale(ownerRecord(me, new Date('2026-12-04T00:00:00Z')), now)).toBe(false);
  });
});
