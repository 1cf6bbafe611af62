import { silentLogger } from '../../common/src/log';
import { isKafkaUnavailable, rerunConsumer } from './consumer-restart';

const named = (name: string, cause?: unknown) => Object.assign(new Error(name), { name, cause });

describe('isKafkaUnavailable', () => {
  it('recognises a lost coordinator or connection anywhere in the cause chain', () => {
    expect(isKafkaUnavailable(named('KafkaJSGroupCoordinatorNotFound'))).toBe(true);
    expect(isKafkaUnavailable(named('KafkaJSNonRetriableError', named('KafkaJSConnectionError')))).toBe(true);
    expect(isKafkaUnavailable(named('KafkaJSNumberOfRetriesExceeded'))).toBe(true);
  });

  it('keeps errors about the consumer itself fatal', () => {
    expect(isKafkaUnavailable(named('KafkaJSNonRetriableError', named('KafkaJSNotImplemented')))).toBe(false);
    expect(isKafkaUnavailable(new Error('unsupported codec'))).toBe(false);
    expect(isKafkaUnavailable(undefined)).toBe(false);
  });
});

describe('rerunConsumer', () => {
  it('retries until the consumer runs again', async () => {
    let calls = 0;
    const ok = await rerunConsumer(
      async () => {
        if (++calls < 3) throw named('KafkaJSConnectionError');
      },
      () => false,
      silentLogger,
    );
    expect(ok).toBe(true);
    expect(calls).toBe(3);
  }, 20_000);

  it('gives up as soon as the worker stops', async () => {
    let calls = 0;
    let stopped = false;
    const ok = await rerunConsumer(
      async () => {
        calls++;
        stopped = true;
        throw named('KafkaJSConnectionError');
      },
      () => stopped,
      silentLogger,
    );
    expect(ok).toBe(false);
    expect(calls).toBe(1);
  });
});
