/** Invalid LogPipelines and updates with the errors admission reports (see validate-cases.ts). */
import type { PipelineCase } from './validate-cases';

/* eslint-disable @typescript-eslint/no-explicit-any -- the point is to build objects the types forbid */
const raw = (x: unknown): any => x;

const ch = 'spec.clickhouse';
const moves = `${ch}.retention.moves`;

/** Objects and updates that admission rejects, with the errors it reports. */
export const INVALID_CASES: PipelineCase[] = [
  {
    name: 'database with a quote',
    change: (lp) => (lp.spec.clickhouse.database = "logs'x"),
    expect: [{ field: `${ch}.database`, type: 'FieldValueInvalid' }],
  },
  {
    name: 'table with a semicolon',
    change: (lp) => (lp.spec.clickhouse.table = 'fw;DROP'),
    expect: [{ field: `${ch}.table`, type: 'FieldValueInvalid' }],
  },
  {
    name: 'column name with a backtick',
    change: (lp) => (lp.spec.clickhouse.columns = [{ name: 'a`b', type: 'String' }]),
    expect: [{ field: `${ch}.columns[0].name`, type: 'FieldValueInvalid' }],
  },
  {
    name: 'column type with a semicolon',
    change: (lp) => (lp.spec.clickhouse.columns = [{ name: 'a', type: 'String; DROP TABLE x' }]),
    expect: [{ field: `${ch}.columns[0].type`, type: 'FieldValueInvalid' }],
  },
  {
    name: 'duplicate column names',
    change: (lp) =>
      (lp.spec.clickhouse.columns = [
        { name: 'a', type: 'String' },
        { name: 'a', type: 'UInt8' },
      ]),
    expect: [{ field: `${ch}.columns[1]`, type: 'FieldValueDuplicate' }],
  },
  {
    name: 'topic name with a slash',
    change: (lp) => (lp.spec.kafka.topic!.name = 'fw/logs'),
    expect: [{ field: 'spec.kafka.topic.name', type: 'FieldValueInvalid' }],
  },
  {
    name: 'duration with an unknown unit',
    change: (lp) => (lp.spec.clickhouse.retention!.deleteAfter = '2y'),
    expect: [{ field: `${ch}.retention.deleteAfter`, type: 'FieldValueInvalid' }],
  },
  {
    name: 'duration with days after hours',
    change: (lp) => (lp.spec.workers!.autoscaling!.pollInterval = '12h1d'),
    expect: [{ field: 'spec.workers.autoscaling.pollInterval', type: 'FieldValueInvalid' }],
  },
  {
    name: 'deleteAfter equal to a move',
    change: (lp) =>
      (lp.spec.clickhouse.retention = {
        deleteAfter: '90d',
        minimumDeleteAfter: '1d',
        moves: [
          { after: '7d', toDisk: 'warm' },
          { after: '2160h', toVolume: 'cold' },
        ],
      }),
    expect: [
      {
        field: `${ch}.retention.deleteAfter`,
        type: 'FieldValueInvalid',
        rule: 'delete-after-later-than-moves',
      },
    ],
  },
  {
    name: 'a move after the default deleteAfter',
    change: (lp) => (lp.spec.clickhouse.retention = { moves: [{ after: '800d', toVolume: 'cold' }] }),
    expect: [
      {
        field: `${ch}.retention.deleteAfter`,
        type: 'FieldValueInvalid',
        rule: 'delete-after-later-than-moves',
      },
    ],
  },
  {
    name: 'a move with both toDisk and toVolume, another with neither',
    change: (lp) =>
      (lp.spec.clickhouse.retention!.moves = [
        { after: '7d', toDisk: 'warm', toVolume: 'cold' },
        { after: '8d' },
      ]),
    expect: [
      { field: `${moves}[0]`, type: 'FieldValueInvalid', rule: 'move-has-one-destination' },
      { field: `${moves}[1]`, type: 'FieldValueInvalid', rule: 'move-has-one-destination' },
    ],
  },
  {
    name: 'minReplicas above maxReplicas',
    change: (lp) => Object.assign(lp.spec.workers!.autoscaling!, { minReplicas: 8, maxReplicas: 4 }),
    expect: [
      {
        field: 'spec.workers.autoscaling.minReplicas',
        type: 'FieldValueInvalid',
        rule: 'min-replicas-within-max',
      },
    ],
  },
  {
    name: 'maxReplicas above partitions',
    change: (lp) => (lp.spec.workers!.autoscaling!.maxReplicas = 13),
    expect: [
      {
        field: 'spec.workers.autoscaling.maxReplicas',
        type: 'FieldValueInvalid',
        rule: 'max-replicas-within-partitions',
      },
    ],
  },
  {
    name: 'minReplicas above the default partitions when maxReplicas is unset',
    change: (lp) => {
      delete lp.spec.kafka.topic;
      lp.spec.workers!.autoscaling = { enabled: true, minReplicas: 7 };
    },
    expect: [
      {
        field: 'spec.workers.autoscaling.minReplicas',
        type: 'FieldValueInvalid',
        rule: 'min-replicas-within-default-max',
      },
    ],
  },
  {
    name: 'fixed replicas above partitions',
    change: (lp) => (lp.spec.workers = { replicas: 13 }),
    expect: [
      { field: 'spec.workers.replicas', type: 'FieldValueInvalid', rule: 'replicas-within-partitions' },
    ],
  },
  {
    name: 'fixed replicas with autoscaling enabled',
    change: (lp) => (lp.spec.workers!.replicas = 2),
    expect: [
      { field: 'spec.workers.replicas', type: 'FieldValueForbidden', rule: 'replicas-or-autoscaling' },
    ],
  },
  {
    name: 'sasl without secretRef',
    change: (lp) => (lp.spec.kafka.sasl = raw({ mechanism: 'plain' })),
    expect: [{ field: 'spec.kafka.sasl.secretRef', type: 'FieldValueRequired' }],
  },
  {
    name: 'integrity enabled without a signing key',
    change: (lp) => (lp.spec.integrity = { enabled: true }),
    expect: [
      {
        field: 'spec.integrity.signingKeySecretRef',
        type: 'FieldValueRequired',
        rule: 'integrity-needs-signing-key',
      },
    ],
  },
  {
    name: 'scheduled seal without a TSA',
    change: (lp) =>
      (lp.spec.integrity = {
        enabled: true,
        signingKeySecretRef: { name: 'k', key: 'ed25519.pem' },
        seal: { schedule: 'daily' },
      }),
    expect: [
      { field: 'spec.integrity.seal', type: 'FieldValueRequired', rule: 'seal-needs-integrity-and-tsa' },
    ],
  },
  {
    name: 'worker env that redirects rows (reserved LP_ name)',
    change: (lp) => (lp.spec.workers!.env = [{ name: 'LP_CLICKHOUSE_URL', value: 'http://elsewhere:8123' }]),
    expect: [{ field: 'spec.workers.env', type: 'FieldValueForbidden', rule: 'reserved-worker-env' }],
  },
  {
    name: 'custom preset without columns',
    change: (lp) => Object.assign(lp.spec.clickhouse, { preset: 'custom', columns: undefined }),
    expect: [{ field: `${ch}.columns`, type: 'FieldValueRequired', rule: 'custom-preset-needs-columns' }],
  },
  {
    name: 'topic config key that is not a Kafka config name',
    change: (lp) => (lp.spec.kafka.topic!.config = { 'Retention MS': '1' }),
    expect: [{ field: 'spec.kafka.topic.config', type: 'FieldValueInvalid', rule: 'topic-config-keys' }],
  },
  {
    name: 'ClickHouse URL with credentials (user:password@)',
    change: (lp) => (lp.spec.clickhouse.url = 'http://writer:s3cret@clickhouse.logs.svc:8123'),
    expect: [{ field: `${ch}.url`, type: 'FieldValueInvalid', rule: 'no-credentials-in-url' }],
  },
  {
    name: 'ClickHouse URL with a user but no password',
    change: (lp) => (lp.spec.clickhouse.url = 'https://writer@clickhouse.logs.svc:8443/'),
    expect: [{ field: `${ch}.url`, type: 'FieldValueInvalid', rule: 'no-credentials-in-url' }],
  },
  {
    name: 'broker address with credentials (user:password@host:port)',
    change: (lp) => (lp.spec.kafka.bootstrapServers = ['user:pw@kafka-0.kafka:9092']),
    expect: [{ field: 'spec.kafka.bootstrapServers[0]', type: 'FieldValueInvalid' }],
  },
  {
    name: 'static field name that is not an identifier',
    change: (lp) => (lp.spec.parser!.staticFields = { 'site-id': 'ist1' }),
    expect: [{ field: 'spec.parser.staticFields', type: 'FieldValueInvalid', rule: 'static-field-names' }],
  },
  {
    name: 'format kv without parser.kv',
    change: (lp) => (lp.spec.parser!.format = 'kv'),
    expect: [{ field: 'spec.parser', type: 'FieldValueInvalid', rule: 'declarative-format-settings' }],
  },
  {
    name: 'kv format whose delimiters are the same character',
    change: (lp) =>
      Object.assign(lp.spec.parser!, {
        format: 'kv',
        kv: { pairDelimiter: ':', keyValueDelimiter: ':', fields: { src_ip: ['src'] } },
      }),
    expect: [{ field: 'spec.parser.kv', type: 'FieldValueInvalid', rule: 'kv-format' }],
  },
  {
    name: 'kv mapping to a column that is not a parser output',
    change: (lp) => Object.assign(lp.spec.parser!, { format: 'kv', kv: { fields: { srcip: ['src'] } } }),
    expect: [{ field: 'spec.parser.kv', type: 'FieldValueInvalid', rule: 'kv-format' }],
  },
  {
    name: 'structured-data mapping to an unknown column',
    change: (lp) =>
      Object.assign(lp.spec.parser!, {
        format: 'structured-data',
        structuredData: { sdId: 'acme@1', fields: { source: ['src'] } },
      }),
    expect: [{ field: 'spec.parser.structuredData', type: 'FieldValueInvalid', rule: 'sd-field-columns' }],
  },
  {
    name: 'csv format with a layout field but no layouts',
    change: (lp) =>
      Object.assign(lp.spec.parser!, { format: 'csv', csv: { fields: { src_ip: 1 }, layoutField: 2 } }),
    expect: [{ field: 'spec.parser.csv', type: 'FieldValueInvalid', rule: 'csv-format' }],
  },
  {
    name: 'auto rule with two formats and no match',
    change: (lp) =>
      (lp.spec.parser!.rules = [{ kv: { fields: { src_ip: ['s'] } }, csv: { fields: { dst_ip: 1 } } }]),
    expect: [{ field: 'spec.parser.rules[0]', type: 'FieldValueInvalid', rule: 'parser-rule-shape' }],
  },
  {
    name: 'unsupported deletion policy',
    change: (lp) => (lp.spec.deletionPolicy = raw('Purge')),
    expect: [{ field: 'spec.deletionPolicy', type: 'FieldValueNotSupported' }],
  },
  {
    name: 'partitions as a string',
    change: (lp) => (lp.spec.kafka.topic!.partitions = raw('12')),
    expect: [{ field: 'spec.kafka.topic.partitions', type: 'FieldValueTypeInvalid' }],
  },
  {
    name: 'partitions decrease on update',
    before: () => undefined,
    change: (lp) => {
      lp.spec.kafka.topic!.partitions = 8;
      lp.spec.workers!.autoscaling!.maxReplicas = 8;
    },
    expect: [
      { field: 'spec.kafka.topic.partitions', type: 'FieldValueInvalid', rule: 'partitions-never-decrease' },
    ],
  },
  {
    name: 'partitions removed on update (back to the default 6)',
    before: (lp) => (lp.spec.workers = { replicas: 2 }),
    change: (lp) => {
      delete lp.spec.kafka.topic!.partitions;
      lp.spec.workers = { replicas: 2 };
    },
    expect: [
      { field: 'spec.kafka.topic.partitions', type: 'FieldValueInvalid', rule: 'partitions-never-decrease' },
    ],
  },
  {
    name: 'topic name changed on update',
    before: () => undefined,
    change: (lp) => (lp.spec.kafka.topic!.name = 'firewall.logs.v2'),
    expect: [{ field: 'spec.kafka.topic.name', type: 'FieldValueForbidden', rule: 'topic-name-immutable' }],
  },
  {
    name: 'topic name set on update after defaulting',
    before: (lp) => delete lp.spec.kafka.topic!.name,
    change: (lp) => (lp.spec.kafka.topic!.name = 'default.fw'),
    expect: [{ field: 'spec.kafka.topic.name', type: 'FieldValueForbidden', rule: 'topic-name-immutable' }],
  },
  {
    name: 'retention below the firewall floor (730d)',
    change: (lp) => (lp.spec.clickhouse.retention!.deleteAfter = '365d'),
    expect: [
      { field: `${ch}.retention.deleteAfter`, type: 'FieldValueInvalid', rule: 'retention-above-minimum' },
    ],
  },
  {
    name: 'retention shortened on update',
    before: (lp) => (lp.spec.clickhouse.retention!.deleteAfter = '1095d'),
    change: (lp) => (lp.spec.clickhouse.retention!.deleteAfter = '800d'),
    expect: [
      {
        field: `${ch}.retention.deleteAfter`,
        type: 'FieldValueForbidden',
        rule: 'retention-never-shortened',
      },
    ],
  },
  {
    name: 'retention removed on update (back to the 730d default)',
    before: (lp) => (lp.spec.clickhouse.retention!.deleteAfter = '1095d'),
    change: (lp) => delete lp.spec.clickhouse.retention!.deleteAfter,
    expect: [
      {
        field: `${ch}.retention.deleteAfter`,
        type: 'FieldValueForbidden',
        rule: 'retention-never-shortened',
      },
    ],
  },
  {
    name: 'retention floor lowered on update',
    before: () => undefined,
    change: (lp) => (lp.spec.clickhouse.retention!.minimumDeleteAfter = '365d'),
    expect: [
      {
        field: `${ch}.retention.minimumDeleteAfter`,
        type: 'FieldValueForbidden',
        rule: 'retention-minimum-never-lowered',
      },
    ],
  },
  {
    name: 'database changed on update',
    before: () => undefined,
    change: (lp) => (lp.spec.clickhouse.database = 'logs2'),
    expect: [{ field: `${ch}.database`, type: 'FieldValueForbidden', rule: 'database-immutable' }],
  },
  {
    name: 'table changed on update',
    before: () => undefined,
    change: (lp) => (lp.spec.clickhouse.table = 'firewall2'),
    expect: [{ field: `${ch}.table`, type: 'FieldValueForbidden', rule: 'table-immutable' }],
  },
  {
    name: 'consumer group set on update',
    before: () => undefined,
    change: (lp) => (lp.spec.kafka.consumerGroup = 'other'),
    expect: [
      { field: 'spec.kafka.consumerGroup', type: 'FieldValueForbidden', rule: 'consumer-group-immutable' },
    ],
  },
];
