import { ClickHouseError } from '@clickhouse/client';
import { IntegrityStage, LINK_DATA_ERROR_ATTEMPTS } from './integrity-stage';
import type { IntegrityRecorder, SealedBatch } from './';
import type { PartitionState } from '../delivery/partition-state';
import type { BatchJob } from '../sink/batch-delivery';

const sealed: SealedBatch = { status: 'new', record: null, token: 't#integrity' };

/** A recorder whose link inserts fail with `err` (its chain head is always held). */
function recorder(err: () => Error) {
  const calls = { commits: 0, unlinked: [] as Array<{ chain: string; range: Record<string, unknown> }> };
  const r = {
    noteUnlinked: (chain: string, range: Record<string, unknown>) => calls.unlinked.push({ chain, range }),
    owns: () => true,
    assign: async () => undefined,
    seal: () => sealed,
    chainsDeadLetters: false,
    commit: async () => {
      calls.commits++;
      throw err();
    },
  };
  return { recorder: r as unknown as IntegrityRecorder, calls };
}

function partition(): PartitionState {
  return { abort: new AbortController(), alive: true } as unknown as PartitionState;
}

const job = { partition: 0, firstOffset: 10, lastOffset: 19, ingestMs: 1, token: 't', body: Buffer.alloc(0) };

async function record(stage: IntegrityStage, state: PartitionState): Promise<void> {
  const ticket = stage.reserve(state);
  await stage.record(state, ticket, job as unknown as BatchJob, []);
}

describe('IntegrityStage link inserts', () => {
  it('gives up a link ClickHouse refuses for its content after bounded attempts (no stalled partition)', async () => {
    const warnings: string[] = [];
    const { recorder: r, calls } = recorder(
      () =>
        new ClickHouseError({
          message: 'Cannot parse input',
          code: '27',
          type: 'CANNOT_PARSE_INPUT_ASSERTION_FAILED',
        }),
    );
    await record(new IntegrityStage(r, (m) => warnings.push(m)), partition());
    expect(calls.commits).toBe(LINK_DATA_ERROR_ATTEMPTS);
    expect(warnings[warnings.length - 1]).toMatch(/refused; batch left without an integrity link/);
    // The range and ClickHouse's error go to the next signed checkpoint (the operator's ChainLinked).
    expect(calls.unlinked).toEqual([
      {
        chain: 'data',
        range: {
          partition: 0,
          first_offset: 10,
          last_offset: 19,
          reason: `ClickHouse refused the integrity link ${LINK_DATA_ERROR_ATTEMPTS} times: Cannot parse input`,
        },
      },
    ]);
  });

  it('keeps retrying while the sink is unavailable, until the partition is revoked', async () => {
    const state = partition();
    const { recorder: r, calls } = recorder(() => new Error('connect ECONNREFUSED'));
    const stage = new IntegrityStage(r, () => {
      // Revoke once it has retried past the data-error bound: an unavailable sink is not given up.
      if (calls.commits > LINK_DATA_ERROR_ATTEMPTS) state.abort.abort();
    });
    await expect(record(stage, state)).rejects.toThrow(/abort/i);
    expect(calls.commits).toBeGreaterThan(LINK_DATA_ERROR_ATTEMPTS);
    expect(calls.unlinked).toEqual([]);
  });
});
