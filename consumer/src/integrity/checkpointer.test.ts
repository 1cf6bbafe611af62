import { generateKeyPairSync } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { Checkpointer, MAX_UNLINKED_NOTES } from './checkpointer';
import type { ChainState } from './chain-state';
import type { CheckpointPayload } from '../../../common/src/integrity/checkpoint';

/** A ClickHouse client that stores checkpoint rows (heads column parsed) and fails while `failing`. */
function fakeClient() {
  const rows: CheckpointPayload[] = [];
  const ctl = { failing: false };
  const client = {
    query: async () => ({ json: async () => [] }),
    insert: async (o: { values: Readable }) => {
      let text = '';
      for await (const c of o.values) text += String(c);
      if (ctl.failing) throw new Error('Code: 241. Memory limit exceeded');
      // The heads column is TSV-escaped canonical JSON without tabs or backslashes here.
      rows.push(JSON.parse(text.split('\t')[1]) as CheckpointPayload);
    },
  };
  return { client: client as unknown as ClickHouseClient, rows, ctl };
}

function checkpointer(
  client: ClickHouseClient,
  heads: () => Array<{ partition: number; lastOffset: number; link: string }>,
) {
  return new Checkpointer({
    client,
    target: {
      database: 'logs',
      integrityTable: 'fw_integrity',
      checkpointTable: 'fw_checkpoints',
      pipeline: 'ns/fw',
      table: 'fw',
    },
    state: { heads } as unknown as ChainState,
    key: generateKeyPairSync('ed25519').privateKey,
    columns: [{ name: 'ts', type: "DateTime64(3, 'UTC')" }],
    timeColumn: 'ts',
    intervalMs: 60_000,
  });
}

const head = { partition: 0, lastOffset: 19, link: 'a'.repeat(64) };
const range = {
  partition: 0,
  first_offset: 10,
  last_offset: 19,
  reason: 'ClickHouse refused the integrity link 3 times: Code: 469. Constraint `c` violated',
};

describe('Checkpointer: ranges left without a link', () => {
  it('signs a noted range into the next checkpoint, even when the heads did not move, then forgets it', async () => {
    const { client, rows } = fakeClient();
    const cp = checkpointer(client, () => [head]);
    await cp.checkpointNow();
    expect(rows[0].unlinked).toBeUndefined();
    // Heads unchanged: an ordinary checkpoint is skipped, one carrying a note is not.
    expect(await cp.checkpointNow()).toBeNull();
    cp.noteUnlinked(range);
    expect(await cp.checkpointNow()).not.toBeNull();
    expect(rows).toHaveLength(2);
    expect(rows[1].unlinked).toEqual([range]);
    expect(await cp.checkpointNow()).toBeNull();
  });

  it('keeps the notes of a checkpoint whose insert failed for the next one', async () => {
    const { client, rows, ctl } = fakeClient();
    const cp = checkpointer(client, () => [head]);
    cp.noteUnlinked(range);
    ctl.failing = true;
    await expect(cp.checkpointNow()).rejects.toThrow(/Memory limit/);
    ctl.failing = false;
    await cp.checkpointNow();
    expect(rows.map((r) => r.unlinked)).toEqual([[range]]);
  });

  it('carries at most the newest MAX_UNLINKED_NOTES ranges', async () => {
    const { client, rows } = fakeClient();
    const cp = checkpointer(client, () => [head]);
    for (let i = 0; i < MAX_UNLINKED_NOTES + 5; i++)
      cp.noteUnlinked({ ...range, first_offset: i * 10, last_offset: i * 10 + 9 });
    await cp.checkpointNow();
    const notes = rows[0].unlinked ?? [];
    expect(notes).toHaveLength(MAX_UNLINKED_NOTES);
    expect(notes[0].first_offset).toBe(50);
    expect(notes[notes.length - 1].first_offset).toBe((MAX_UNLINKED_NOTES + 4) * 10);
  });
});
