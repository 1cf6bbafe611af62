/**
 * Integration tests talk to real services on a shared 2-core machine: a hook or test gets three
 * minutes unless it says otherwise (`testTimeout` is a global jest option, not a project one).
 * Every test file's kafkajs gets the product's request-queue timer fix too (a test that builds
 * its own `new Kafka(...)` would otherwise print kafkajs's TimeoutNegativeWarning into the run).
 */
import { fixKafkaRequestQueueTimer } from '../../common/src/kafka/request-queue-timer';

jest.setTimeout(180_000);
fixKafkaRequestQueueTimer();
