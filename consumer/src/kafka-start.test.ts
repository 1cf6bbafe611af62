import { silentLogger } from '../../common/src/log';
import { KafkaStart, startFailureReason } from './kafka-start';

const named = (name: string, message: string, cause?: unknown) =>
  Object.assign(new Error(message), { name, cause });
const fast = { policy: { initialMs: 1, maxMs: 2, factor: 2 } };

describe('startFailureReason', () => {
  it('names an unreachable Kafka as the cause, with the broker error', () => {
    const err = named(
      'KafkaJSNonRetriableError',
      'Connection error: connect ECONNREFUSED 127.0.0.1:9092',
      named('KafkaJSConnectionError', 'x'),
    );
    expect(startFailureReason('consumer start', err)).toBe(
      'Kafka unreachable: Connection error: connect ECONNREFUSED 127.0.0.1:9092',
    );
  });

  it('names the step for any other failure', () => {
    expect(startFailureReason('consumer start', new Error('topic\nmissing'))).toBe(
      'consumer start failed: topic missing',
    );
  });
});

describe('KafkaStart', () => {
  it('retries until the connect step succeeds, unready with the last cause meanwhile', async () => {
    const start = new KafkaStart('consumer start', silentLogger);
    expect(start.notReady()).toEqual({ ready: false, reason: 'connecting to Kafka' });
    const seen: Array<string | undefined> = [];
    let calls = 0;
    const ok = await start.run(
      async () => {
        seen.push(start.notReady()?.reason);
        if (++calls < 3) throw named('KafkaJSConnectionError', `refused ${calls}`);
      },
      () => false,
      fast,
    );
    expect(ok).toBe(true);
    expect(calls).toBe(3);
    expect(seen).toEqual([
      'connecting to Kafka',
      'Kafka unreachable: refused 1',
      'Kafka unreachable: refused 2',
    ]);
    expect(start.notReady()).toBeUndefined();
  });

  it('stops trying once the process stops, and stays unready', async () => {
    const start = new KafkaStart('kafka connect', silentLogger);
    let calls = 0;
    let stopped = false;
    const ok = await start.run(
      async () => {
        calls++;
        stopped = true;
        throw new Error('no brokers');
      },
      () => stopped,
      fast,
    );
    expect(ok).toBe(false);
    expect(calls).toBe(1);
    expect(start.notReady()?.reason).toBe('kafka connect failed: no brokers');
  });

  it('never runs the connect step when already stopping', async () => {
    const start = new KafkaStart('kafka connect', silentLogger);
    let calls = 0;
    expect(
      await start.run(
        async () => void calls++,
        () => true,
        fast,
      ),
    ).toBe(false);
    expect(calls).toBe(0);
  });

  it('wakes from the backoff when the signal aborts', async () => {
    const start = new KafkaStart('kafka connect', silentLogger);
    const abort = new AbortController();
    let calls = 0;
    const t0 = Date.now();
    const ok = await start.run(
      async () => {
        calls++;
        abort.abort();
        throw new Error('down');
      },
      () => abort.signal.aborted && calls > 0,
      { policy: { initialMs: 60_000, maxMs: 60_000, factor: 1 }, signal: abort.signal },
    );
    expect(ok).toBe(false);
    expect(Date.now() - t0).toBeLessThan(30_000);
  });
});
