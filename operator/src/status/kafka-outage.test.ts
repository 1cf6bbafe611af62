import type { ConditionInput } from './conditions';
import { blameKafka, KAFKA_UNREACHABLE } from './kafka-outage';

const cond = (
  type: ConditionInput['type'],
  status: ConditionInput['status'],
  reason: string,
  message = 'm',
): ConditionInput => ({
  type,
  status,
  reason,
  message,
});
const cause = 'cannot connect to Kafka k:9092: Connection error: connect ECONNREFUSED 10.0.0.1:9092';

describe('blameKafka', () => {
  it('changes nothing while Kafka answers', () => {
    const c = cond('WorkersReady', 'False', 'WorkersUnavailable', '0 of 2 workers ready');
    expect(blameKafka(c, undefined)).toBe(c);
  });

  it('turns a Ready topic False with the broker error', () => {
    expect(blameKafka(cond('TopicReady', 'True', 'TopicReady'), cause)).toEqual(
      cond('TopicReady', 'False', KAFKA_UNREACHABLE, `Kafka unreachable: ${cause}`),
    );
  });

  it('keeps a topic check that already failed (it says why itself)', () => {
    const c = cond('TopicReady', 'False', 'KafkaUnreachable', 'cannot connect to Kafka k:9092: refused');
    expect(blameKafka(c, cause)).toBe(c);
  });

  it('names the cause of unready workers and receivers, keeping the count', () => {
    expect(
      blameKafka(cond('WorkersReady', 'False', 'WorkersUnavailable', '0 of 2 workers ready'), cause),
    ).toEqual(
      cond('WorkersReady', 'False', KAFKA_UNREACHABLE, `Kafka unreachable: ${cause} (0 of 2 workers ready)`),
    );
    expect(
      blameKafka(cond('IngestReady', 'False', 'ReceiversUnavailable', '0 of 1 receivers ready'), cause),
    ).toMatchObject({
      reason: KAFKA_UNREACHABLE,
      message: `Kafka unreachable: ${cause} (0 of 1 receivers ready)`,
    });
  });

  it('leaves ready workers and other causes alone', () => {
    for (const c of [
      cond('WorkersReady', 'True', 'WorkersAvailable'),
      cond('WorkersReady', 'False', 'RollingOut'),
      cond('IngestReady', 'False', 'SecretNotFound'),
      cond('TableReady', 'True', 'TableReady'),
    ])
      expect(blameKafka(c, cause)).toBe(c);
  });
});
