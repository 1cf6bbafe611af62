import { KafkaApplyError } from '../../apply/kafka-client';
import { ownerRecordNotYet } from './topic-part';

describe('ownerRecordNotYet', () => {
  const unknown = new KafkaApplyError(
    'KafkaError',
    'recording the owners of t: This server does not host this topic-partition',
    'UNKNOWN_TOPIC_OR_PARTITION',
  );

  it('excuses only a topic this call created that the coordinator does not know yet', () => {
    expect(ownerRecordNotYet(unknown, true)).toBe(true);
  });

  it('reports every other failure as before', () => {
    // A topic that existed before this call: its record failing is a real failure.
    expect(ownerRecordNotYet(unknown, false)).toBe(false);
    // Any other broker error, or one without a type (a connection failure), on a new topic.
    const acl = new KafkaApplyError('KafkaError', 'recording…', 'GROUP_AUTHORIZATION_FAILED');
    expect(ownerRecordNotYet(acl, true)).toBe(false);
    expect(ownerRecordNotYet(new KafkaApplyError('KafkaUnreachable', 'down'), true)).toBe(false);
    expect(ownerRecordNotYet(new Error('UNKNOWN_TOPIC_OR_PARTITION'), true)).toBe(false);
  });
});
