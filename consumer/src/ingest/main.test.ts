import { READY_WINDOW_MS, ingestReady } from './main';

describe('ingestReady', () => {
  const base = {
    listening: true,
    stopping: false,
    now: 100_000,
    lastKafkaOkMs: 99_000,
    lastKafkaFailureMs: 0,
  };
  it('is ready only when listening, not stopping and Kafka answered recently without a newer failure', () => {
    expect(ingestReady(base)).toEqual({ ready: true, reason: 'ok' });
    expect(ingestReady({ ...base, stopping: true }).ready).toBe(false);
    expect(ingestReady({ ...base, listening: false }).ready).toBe(false);
    expect(ingestReady({ ...base, lastKafkaOkMs: base.now - READY_WINDOW_MS - 1 }).reason).toBe(
      'kafka unreachable',
    );
    expect(ingestReady({ ...base, lastKafkaFailureMs: 99_500 }).reason).toBe('kafka send failing');
  });
});
