import { workerReadiness } from './worker-readiness';

const named = (name: string, message: string, cause?: unknown) =>
  Object.assign(new Error(message), { name, cause });
const up = { draining: false, joined: true, clickhouseOk: true };

describe('workerReadiness', () => {
  it('is ready when joined and ClickHouse answers', () => {
    expect(workerReadiness(up)).toEqual({ ready: true, reason: 'ok' });
  });

  it('names a Kafka outage with the broker error while not joined', () => {
    const crash = named(
      'KafkaJSNonRetriableError',
      'Connection error: connect ECONNREFUSED 127.0.0.1:9092',
      named('KafkaJSConnectionError', 'x'),
    );
    expect(workerReadiness({ ...up, joined: false, consumerError: crash })).toEqual({
      ready: false,
      reason: 'Kafka unreachable: Connection error: connect ECONNREFUSED 127.0.0.1:9092',
    });
    const coordinator = named('KafkaJSGroupCoordinatorNotFound', 'Failed to find group coordinator');
    expect(workerReadiness({ ...up, joined: false, consumerError: coordinator }).reason).toBe(
      'Kafka unreachable: Failed to find group coordinator',
    );
  });

  it('says only "not joined" when there is no error or it is not about reaching Kafka', () => {
    const notJoined = { ready: false, reason: 'not joined to the consumer group' };
    expect(workerReadiness({ ...up, joined: false })).toEqual(notJoined);
    const other = named('KafkaJSProtocolError', 'This server does not host this topic-partition');
    expect(workerReadiness({ ...up, joined: false, consumerError: other })).toEqual(notJoined);
  });

  it('puts draining first and ClickHouse after the group', () => {
    const crash = named('KafkaJSConnectionError', 'refused');
    expect(workerReadiness({ ...up, draining: true, joined: false, consumerError: crash }).reason).toBe(
      'draining',
    );
    expect(workerReadiness({ ...up, clickhouseOk: false })).toEqual({
      ready: false,
      reason: 'ClickHouse unreachable',
    });
    expect(workerReadiness({ ...up, joined: false, clickhouseOk: false, consumerError: crash }).reason).toBe(
      'Kafka unreachable: refused',
    );
  });
});
