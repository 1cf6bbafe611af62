/**
 * Fixtures of the syslog receiver's integration tests: the receiver process started from a config
 * file exactly as in its pod (`node dist/consumer/src/ingest/main.js --config <file>`), and a reader
 * that collects every message of the pipeline's topic with its sender header.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Consumer } from 'kafkajs';
import {
  INGEST_DEFAULTS,
  RECEIVER_ENTRY,
  SENDER_HEADER,
  type IngestConfig,
  type ListenerConfig,
} from '../common/src/ingest-config';
import { decodeValue } from '../common/src/kafka/value-codec';
import { bedScratchDir, type TestBed } from './env/testbed';
import { kafkaClient, spawnCompiled, type Pipeline, type WorkerProcess } from './worker-support';

/** A receiver config for pipeline `p` on the bed (defaults as the operator renders them). */
export function ingestConfig(
  bed: TestBed,
  p: Pipeline,
  listeners: ListenerConfig[],
  over: Partial<IngestConfig> = {},
): IngestConfig {
  return {
    ...INGEST_DEFAULTS,
    pipeline: { namespace: 'test', name: p.name, uid: `uid-${p.name}` },
    kafka: {
      brokers: [bed.kafka!.bootstrap],
      topic: p.topic,
      groupId: 'unused',
      clientId: `ingest-${p.name}`,
    },
    listeners,
    packing: { ...INGEST_DEFAULTS.packing },
    allowedSourceCIDRs: [],
    drainTimeoutMs: 10_000,
    ...over,
  };
}

/** Spawns the receiver entry point with `cfg` (written to a file) and its probe server on `httpPort`. */
export function spawnReceiver(cfg: IngestConfig, httpPort: number, tag: string): WorkerProcess {
  const dir = bedScratchDir('ingest-');
  const configFile = path.join(dir, 'ingest.json');
  fs.writeFileSync(configFile, JSON.stringify({ ...cfg, httpPort }));
  return spawnCompiled(RECEIVER_ENTRY, configFile, path.join(dir, `${tag}.log`), httpPort);
}

/** One line read back from the topic, with the message it came in. */
export interface TopicLine {
  line: string;
  sender: string;
  partition: number;
  offset: string;
}

/** Collects every line of `topic` from the beginning (a fresh group) until stop(). */
export async function readTopic(
  bed: TestBed,
  topic: string,
): Promise<{ lines: TopicLine[]; messages: () => number; stop(): Promise<void> }> {
  const consumer: Consumer = kafkaClient(bed, 'ingest-reader').consumer({
    groupId: `reader-${topic}-${Date.now()}`,
  });
  const lines: TopicLine[] = [];
  let messages = 0;
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      messages++;
      const sender = message.headers?.[SENDER_HEADER]?.toString() ?? '';
      const value = decodeValue(message.value ?? Buffer.alloc(0), message.headers);
      for (const line of value.toString('utf8').split('\n'))
        lines.push({ line, sender, partition, offset: message.offset });
    },
  });
  return { lines, messages: () => messages, stop: () => consumer.disconnect() };
}

/** Lines of `lines` carrying `case=<tag> seq=<n>`: the seq numbers seen, in arrival order. */
export function seqsOf(lines: readonly TopicLine[], tag: string): number[] {
  const re = new RegExp(`case=${tag} seq=(\\d+)`);
  const out: number[] = [];
  for (const l of lines) {
    const m = re.exec(l.line);
    if (m) out.push(Number(m[1]));
  }
  return out;
}
