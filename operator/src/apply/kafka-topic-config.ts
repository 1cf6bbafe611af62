/**
 * Managed topic configs: reading them back, repairing drift without losing unmanaged overrides, and
 * the topic's effective max.message.bytes (which bounds a packed syslog message). Separate from
 * kafka-topic.ts because the AlterConfigs replace-all semantics and the limit are their own concern.
 */
import { ConfigResourceTypes, ConfigSource, type Admin, type ConfigEntries } from 'kafkajs';
import type { TopicSpec } from '../desired/topic';
import { errorMessage } from './kafka-client';
import { call, errorType, kafkaError } from './kafka-topic-admin';
import { countKafkaWrite } from './kafka-writes';

/** Topic config bounding one record batch (so one packed syslog message). */
export const MAX_MESSAGE_BYTES = 'max.message.bytes';

/** The current value of every config set on the topic itself (source TOPIC_CONFIG), and all values. */
export async function topicConfigs(
  admin: Admin,
  topic: string,
): Promise<{ own: ConfigEntries[]; all: ConfigEntries[] }> {
  const res = await call(`describing configs of ${topic}`, () =>
    admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }],
    }),
  );
  const all = res.resources[0]?.configEntries ?? [];
  return { own: all.filter((e) => e.configSource === ConfigSource.TOPIC_CONFIG), all };
}

/** A config entry as both the admin API and the batcher report it. */
export type ConfigEntryView = Pick<ConfigEntries, 'configName' | 'configValue' | 'isSensitive'> & {
  configSource: number;
};

/**
 * Repairs drift of managed configs, given every current config of the topic. The legacy
 * AlterConfigs request (all kafkajs has) replaces the topic's whole override set, so the current
 * overrides are sent back unchanged with the managed keys set: unmanaged overrides survive.
 */
export async function repairConfigsFrom(
  withAdmin: <T>(fn: (admin: Admin) => Promise<T>) => Promise<T>,
  spec: TopicSpec,
  all: ConfigEntryView[],
): Promise<{ changes: string[]; rejected?: string; maxMessageBytes?: number }> {
  const own = all.filter((e) => e.configSource === ConfigSource.TOPIC_CONFIG);
  const limit = maxMessageBytesOf(all, spec);
  const drifted = spec.configEntries.filter(
    (want) => all.find((e) => e.configName === want.name)?.configValue !== want.value,
  );
  if (drifted.length === 0) return { changes: [], maxMessageBytes: limit };
  if (own.some((e) => e.isSensitive))
    return {
      changes: [],
      maxMessageBytes: limit,
      rejected: 'the topic has a sensitive override that cannot be read back and preserved',
    };
  const merged = new Map(own.map((e) => [e.configName, e.configValue]));
  for (const want of spec.configEntries) merged.set(want.name, want.value);
  try {
    countKafkaWrite('AlterConfigs');
    await withAdmin((admin) =>
      admin.alterConfigs({
        validateOnly: false,
        resources: [
          {
            type: ConfigResourceTypes.TOPIC,
            name: spec.topic,
            configEntries: [...merged].map(([name, value]) => ({ name, value })),
          },
        ],
      }),
    );
  } catch (err) {
    if (/INVALID|POLICY/.test(errorType(err) ?? ''))
      return { changes: [], rejected: errorMessage(err), maxMessageBytes: limit };
    throw kafkaError(err, `altering configs of ${spec.topic}`);
  }
  return { changes: drifted.map((d) => `set ${d.name}=${d.value}`), maxMessageBytes: limit };
}

/**
 * The topic's max.message.bytes after this apply: the managed value when the spec sets it (just
 * written), else what the broker reports (the topic's own override or the broker default).
 */
export function maxMessageBytesOf(all: readonly ConfigEntryView[], spec: TopicSpec): number | undefined {
  const wanted = spec.configEntries.find((e) => e.name === MAX_MESSAGE_BYTES)?.value;
  const value = wanted ?? all.find((e) => e.configName === MAX_MESSAGE_BYTES)?.configValue;
  const n = value === undefined ? NaN : Number(value);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}
