import { generateKeyPairSync } from 'node:crypto';
import {
  buildCheckpointPayload,
  canonicalJson,
  GENESIS_CHECKPOINT,
  keyFingerprint,
  signCheckpoint,
} from '../../../common/src/integrity/checkpoint';
import { checkCheckpoints, type CheckpointRow } from './verify-checkpoints';
import { FindingSink } from './verify-report';

const keys = generateKeyPairSync('ed25519');
const reason = 'ClickHouse refused the integrity link 3 times: Code: 469. Constraint `c` violated';

function row(unlinked?: unknown[]): CheckpointRow {
  const createdAtMs = Date.parse('2026-12-04T05:00:00Z');
  const payload = {
    ...buildCheckpointPayload({
      pipeline: 'ns/fw',
      database: 'logs',
      table: 'fw',
      createdAtMs,
      key: keys.privateKey,
      columns: [{ name: 'ts', type: "DateTime64(3, 'UTC')" }],
      timeColumn: 'ts',
      heads: [{ partition: 0, lastOffset: 19, link: 'a'.repeat(64) }],
      prev: GENESIS_CHECKPOINT,
      intervalMs: 60_000,
    }),
    ...(unlinked ? { unlinked } : {}),
  };
  const text = canonicalJson(payload);
  return {
    created_at_ms: createdAtMs,
    heads: text,
    signature: signCheckpoint(text, keys.privateKey),
    public_key: keyFingerprint(keys.privateKey),
    tsa_token: '',
  };
}

async function* rows(...r: CheckpointRow[]): AsyncIterable<CheckpointRow> {
  yield* r;
}

describe('verify: ranges a checkpoint signed as stored without a link', () => {
  it('accepts the signed note and reports the cause as a notice beside the range', async () => {
    const sink = new FindingSink();
    const note = { partition: 0, first_offset: 10, last_offset: 19, reason };
    const result = await checkCheckpoints(
      rows(row(), row([note])),
      { database: 'logs', table: 'fw', publicKey: keys.publicKey },
      sink,
    );
    expect(result.verified).toBe(2);
    expect(sink.findings).toEqual([]);
    expect(sink.notices).toEqual([
      expect.objectContaining({
        kind: 'info',
        partition: 0,
        firstOffset: 10,
        lastOffset: 19,
        detail: `the worker signed that it stored these offsets without an integrity link: ${reason}`,
      }),
    ]);
  });
});
