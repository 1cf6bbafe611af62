/**
 * Import this module before anything that loads 'kafkajs' (first import of an entry point): it
 * installs the parts of kafkajs we replace that kafkajs captures at load time (fetch-batch.ts).
 * Loaded later it changes nothing and the worker logs that kafkajs's own Batch is in use.
 */
import { installFastFetchBatch } from './fetch-batch';

installFastFetchBatch();
