/** Schema of spec.kafka and spec.parser (see types.ts KafkaSpec / ParserSpec). */
import { SASL_MECHANISMS } from '../../../common/src/worker-config';
import { DEFAULT_PARTITIONS } from './defaults';
import { csvSchema, kvSchema, rulesSchema, sdSchema } from './schema-parser-formats';
import {
  TOPIC_PATTERN,
  bool,
  credentialsRef,
  dict,
  duration,
  int,
  list,
  obj,
  oneOf,
  secretKeyRef,
  str,
  type JSONSchemaProps,
} from './schema-dsl';
import { DECLARATIVE_FORMAT_NAMES, FORMAT_NAMES } from '../../../common/src/columns/sources';
import { REQUIRABLE_SOURCES } from '../../../common/src/parser-contract';

/** Column sources `parser.requiredFields` may name (the worker's contract). */
export const REQUIRED_FIELD_SOURCES = REQUIRABLE_SOURCES;

/** Supported parser formats, in the order the docs list them. */
export const PARSER_FORMATS = ['auto', ...FORMAT_NAMES, ...DECLARATIVE_FORMAT_NAMES] as const;

const sasl = obj(
  'SASL authentication with credentials from a Secret. Absent means no SASL.',
  {
    mechanism: oneOf('SASL mechanism: plain, scram-sha-256 or scram-sha-512.', SASL_MECHANISMS),
    secretRef: credentialsRef('Secret with the SASL user name and password. Required whenever sasl is set.'),
  },
  ['mechanism', 'secretRef'],
);

const tls = obj(
  'TLS to the brokers. Absent means plaintext.',
  {
    enabled: bool('Whether to connect with TLS.'),
    caSecretRef: secretKeyRef(
      'CA bundle (PEM) that signs the broker certificates. Absent means the system trust store.',
      'Key of the PEM CA bundle in the Secret.',
    ),
    insecureSkipVerify: bool('Skip verification of the broker certificates (testing only). Default false.'),
  },
  ['enabled'],
);

const topic = obj('The topic the pipeline consumes; the operator creates it and grows its partitions.', {
  name: str(
    'Topic name. Default `<namespace>.<name>`. Immutable: it cannot be set, changed or removed after creation. At most 245 characters so the dead-letter topic `<name>.dlq` stays a valid Kafka name.',
    { pattern: TOPIC_PATTERN, maxLength: 245 },
  ),
  partitions: int(
    `Number of partitions. Default ${DEFAULT_PARTITIONS}. May only grow (Kafka cannot remove partitions). Bounds the worker count: one partition is consumed by at most one worker.`,
    1,
    10_000,
  ),
  replicationFactor: int(
    'Replication factor used when the topic is created. Default 1. Not changed afterwards.',
    1,
    16,
  ),
  config: dict(
    'Topic configs the operator sets and keeps (e.g. retention.ms); configs not listed are left alone. `compression.type` defaults to lz4.',
    str('Config value, as Kafka expects it in text form.', { maxLength: 256 }),
    64,
  ),
});

/** spec.kafka */
export const kafkaSchema: JSONSchemaProps = obj(
  'Kafka connection, authentication and the topic to consume.',
  {
    bootstrapServers: list(
      'Bootstrap brokers as host:port.',
      str('A broker address, host:port.', { pattern: '^[A-Za-z0-9.\\-\\[\\]:]+:[0-9]{1,5}$' }),
      32,
      1,
    ),
    sasl,
    tls,
    topic,
    consumerGroup: str(
      'Consumer group of the workers. Default `logpipeline.<namespace>.<name>`. Immutable: a new group has no committed offsets.',
      { pattern: '^[A-Za-z0-9._-]{1,249}$', maxLength: 249 },
    ),
  },
  ['bootstrapServers'],
);

/** spec.parser */
export const parserSchema: JSONSchemaProps = obj('How log lines are parsed and enriched.', {
  format: oneOf(
    'Log format: auto (detect per line), rfc5424, rfc3164, fortigate, paloalto, cisco-asa, iptables, cef, json, pfsense (also OPNsense filterlog), juniper-srx (RT_FLOW), huawei-usg, sophos, sonicwall, checkpoint, mikrotik, or a format of your own: kv, csv, structured-data (settings in parser.kv / csv / structuredData). Default auto.',
    PARSER_FORMATS,
  ),
  timezone: str(
    'IANA time zone for timestamps that carry none (RFC 3164 and some vendor formats). Default UTC.',
    {
      pattern: '^[A-Za-z0-9_+\\-/]{1,64}$',
      maxLength: 64,
    },
  ),
  maxLineBytes: int(
    'Lines longer than this many bytes go to the dead-letter queue. Default 65536.',
    256,
    16 * 1024 * 1024,
  ),
  staticFields: dict(
    'Static enrichment fields (e.g. the collector site), available to columns as `static:<name>`. Names are identifiers.',
    str('Field value.', { maxLength: 1024 }),
    32,
  ),
  requiredFields: list(
    'Column sources every row must have (e.g. [src_ip, dst_ip]); a row without one goes to the dead-letter queue with reason missing_field:<name>. Default none (see docs/compliance.md).',
    oneOf('A requirable column source.', REQUIRED_FIELD_SOURCES),
    16,
  ),
  kv: kvSchema(),
  csv: csvSchema(),
  structuredData: sdSchema(),
  rules: rulesSchema,
  coverage: obj(
    'The ParserCoverage condition: the share of parsed rows without src_ip over the last window, with the most frequent line shapes (hashed) lacking it.',
    {
      window: duration('Window the share is computed over. Default 15m.'),
      maxMissingSrcIpPercent: int(
        'ParserCoverage turns False when more than this percentage of the window rows lack src_ip. Default 5.',
        0,
        100,
      ),
    },
  ),
});
