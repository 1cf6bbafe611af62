/**
 * The LogPipeline CustomResourceDefinition, assembled from the schema modules and the rule table.
 * crds/logpipeline.io_logpipelines.yaml is rendered from `buildCrd()` (`npm run crd:generate`) and a
 * unit test fails when the committed file and this source disagree.
 */
import { stringify } from 'yaml';
import { GROUP, KIND, PLURAL, VERSION } from './types';
import {
  TOPIC_PATTERN,
  IDENTIFIER_PATTERN,
  bool,
  int,
  K8S_NAME_PATTERN,
  obj,
  oneOf,
  secretKeyRef,
  duration,
  str,
  type JSONSchemaProps,
} from './schema-dsl';
import { clickhouseSchema } from './schema-clickhouse';
import { ingestSchema } from './schema-ingest';
import { kafkaSchema, parserSchema } from './schema-kafka';
import { statusSchema } from './schema-status';
import { workersSchema } from './schema-workers';
import { PIPELINE_RULES, celRulesAt } from './validate-rules';

const deadLetterSchema = obj(
  'Where unparseable lines and rejected rows go, so nothing is silently dropped.',
  {
    enabled: bool('Keep a dead-letter queue. Default true.'),
    topic: str('Kafka topic of the dead-letter queue. Default `<topic>.dlq`.', {
      pattern: TOPIC_PATTERN,
      maxLength: 249,
    }),
    table: str('ClickHouse table (same database) for dead letters. Default `<table>_dlq`.', {
      pattern: IDENTIFIER_PATTERN,
      maxLength: 63,
    }),
  },
);

const integritySchema = obj('Tamper evidence: hash-chained, signed checkpoints of the inserted batches.', {
  enabled: bool('Write signed integrity checkpoints. Default false. Requires signingKeySecretRef.'),
  signingKeySecretRef: secretKeyRef(
    'Secret holding the Ed25519 private key (PEM, PKCS#8) that signs checkpoints. Required when enabled.',
    'Key of the PEM private key in the Secret, e.g. ed25519.pem.',
  ),
  checkpointInterval: duration('How often a checkpoint is signed. Default 5m.'),
  tsaUrl: str('Optional RFC 3161 Time Stamping Authority URL that countersigns checkpoints.', {
    pattern: '^https?://[^\\s]+$',
    maxLength: 2048,
  }),
  tsaCredentialsSecretRef: obj(
    "Secret with the credentials of a TSA that is not open (for the checkpoints' and the scheduled seal's timestamps): keys `username`/`password` (HTTP basic auth), `tls.crt`/`tls.key` (client certificate, mTLS), `ca.crt` (CA of the TSA HTTPS certificate); each optional.",
    {
      name: str('Name of the Secret in the LogPipeline namespace.', {
        pattern: K8S_NAME_PATTERN,
        minLength: 1,
      }),
    },
    ['name'],
  ),
  seal: obj(
    'Daily sealed evidence made by the operator: each complete day of the table is exported canonically, and its manifest (SHA-256, row count, chain heads, checkpoints, retention) signed with the signing key, timestamped by tsaUrl and stored in `<table>_seals`. Requires enabled and tsaUrl.',
    {
      schedule: oneOf('How often: `daily` seals each UTC day once it is complete.', ['daily']),
      grace: duration('Wait this long after midnight UTC for late lines before sealing the day. Default 1h.'),
      backfillDays: int('Unsealed days this far back are sealed too (oldest first). Default 7.', 1, 800),
      timeZone: str(
        'IANA time zone of the day boundaries, e.g. Europe/Istanbul. Default UTC. Changing it moves the boundaries of days not yet sealed only.',
        { pattern: '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$', maxLength: 64 },
      ),
    },
    ['schedule'],
  ),
});

/** The spec schema without rules attached. */
const specSchema: JSONSchemaProps = obj(
  'Desired state of the pipeline: Kafka topic -> parsing workers -> ClickHouse table with retention.',
  {
    kafka: kafkaSchema,
    parser: parserSchema,
    clickhouse: clickhouseSchema,
    workers: workersSchema,
    deadLetter: deadLetterSchema,
    integrity: integritySchema,
    ingest: ingestSchema,
    deletionPolicy: oneOf(
      'What happens to the topic and table when the LogPipeline is deleted: Retain (default; compliance data survives) or Delete.',
      ['Retain', 'Delete'],
    ),
  },
  ['kafka', 'clickhouse'],
);

/** Returns the schema node at a rule location such as `spec.clickhouse.retention.moves[]`. */
export function schemaNodeAt(root: JSONSchemaProps, at: string): JSONSchemaProps | undefined {
  let node: JSONSchemaProps | undefined = root;
  for (const step of at.split('.')) {
    const isItems = step.endsWith('[]');
    node = node?.properties?.[isItems ? step.slice(0, -2) : step];
    if (isItems) node = node?.items;
  }
  return node;
}

/** Deep copy of `schema` with every rule of the table attached where it belongs. */
function withRules(schema: JSONSchemaProps): JSONSchemaProps {
  const copy = structuredClone(schema);
  for (const at of new Set(PIPELINE_RULES.map((r) => r.at))) {
    const node = schemaNodeAt(copy, at);
    if (!node) throw new Error(`validation rule location ${at} is not in the schema`);
    node['x-kubernetes-validations'] = celRulesAt(at);
  }
  return copy;
}

/** The openAPIV3Schema of v1alpha1, rules included. */
export function buildOpenApiSchema(): JSONSchemaProps {
  return withRules(
    obj(
      'A compliance-grade log pipeline: a Kafka topic consumed by parsing workers into a ClickHouse table with TTL retention, tamper evidence and lag-based autoscaling.',
      {
        apiVersion: str('APIVersion of this object: logpipeline.io/v1alpha1.', { maxLength: 64 }),
        kind: str('Kind of this object: LogPipeline.', { maxLength: 64 }),
        // The apiserver forbids describing metadata; kubectl explain documents it from ObjectMeta.
        metadata: { type: 'object' },
        spec: specSchema,
        status: statusSchema,
      },
      ['spec'],
    ),
  );
}

/** The complete CustomResourceDefinition object. */
export function buildCrd(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${PLURAL}.${GROUP}` },
    spec: {
      group: GROUP,
      names: {
        kind: KIND,
        listKind: `${KIND}List`,
        plural: PLURAL,
        singular: 'logpipeline',
        shortNames: ['lp'],
        categories: ['logpipeline'],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: buildOpenApiSchema() },
          subresources: {
            status: {},
            scale: {
              specReplicasPath: '.spec.workers.replicas',
              statusReplicasPath: '.status.workers.current',
              labelSelectorPath: '.status.workers.selector',
            },
          },
          additionalPrinterColumns: printerColumns(),
        },
      ],
    },
  };
}

function printerColumns(): Array<Record<string, string>> {
  return [
    {
      name: 'Ready',
      type: 'string',
      jsonPath: '.status.conditions[?(@.type=="Ready")].status',
      description: 'Ready condition',
    },
    { name: 'Topic', type: 'string', jsonPath: '.status.topic.name', description: 'Kafka topic' },
    {
      name: 'Partitions',
      type: 'integer',
      jsonPath: '.status.topic.partitions',
      description: 'Topic partitions',
    },
    {
      name: 'Replicas',
      type: 'integer',
      jsonPath: '.status.workers.current',
      description: 'Current worker replicas',
    },
    {
      name: 'Lag',
      type: 'integer',
      jsonPath: '.status.lag.total',
      description: 'Total consumer lag (messages)',
    },
    {
      name: 'Ingest',
      type: 'string',
      jsonPath: '.status.ingest.endpoints[0]',
      description: 'First syslog receiver endpoint (spec.ingest.syslog)',
    },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ];
}

/** The CRD as the YAML committed under crds/ (stable output, prettier-compatible). */
export function renderCrdYaml(): string {
  const header =
    '# Generated from operator/src/api/schema-*.ts and validate-rules.ts by `npm run crd:generate`. Do not edit.\n';
  return header + stringify(buildCrd(), { lineWidth: 0, indentSeq: true, singleQuote: true });
}
