/**
 * Schema of .status (see types.ts LogPipelineStatus). The status is fully specified, so the
 * apiserver prunes any field the operator writes that is not listed here: extend both together.
 */
import {
  TOPIC_PATTERN,
  int,
  keyedList,
  list,
  num,
  obj,
  oneOf,
  str,
  type JSONSchemaProps,
} from './schema-dsl';

const INT64_MAX_SAFE = 9_007_199_254_740_991;

/** metav1.Condition, with the bounds Kubernetes itself uses. */
const condition = obj(
  'One aspect of the current state (metav1.Condition).',
  {
    type: str('Condition type in CamelCase, e.g. Ready, TopicReady, TableReady, WorkersReady.', {
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      maxLength: 316,
    }),
    status: oneOf('True, False or Unknown.', ['True', 'False', 'Unknown']),
    reason: str('Machine-readable CamelCase reason of the last transition.', {
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
      minLength: 1,
      maxLength: 1024,
    }),
    message: str('Human-readable details of the last transition.', { maxLength: 32_768 }),
    observedGeneration: int(
      'metadata.generation the condition was computed from.',
      0,
      INT64_MAX_SAFE,
      'int64',
    ),
    lastTransitionTime: str('When the status last changed.', { format: 'date-time', maxLength: 64 }),
  },
  ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
);

/** .status */
export const statusSchema: JSONSchemaProps = obj('Observed state, written by the operator.', {
  observedGeneration: int(
    'metadata.generation of the spec the status describes.',
    0,
    INT64_MAX_SAFE,
    'int64',
  ),
  conditions: keyedList('Current conditions; Ready summarises the others.', condition, 'type', 16),
  topic: obj('The Kafka topic as observed.', {
    name: str('Topic name.', { pattern: TOPIC_PATTERN, maxLength: 249 }),
    partitions: int('Partition count.', 0, 1_000_000),
    clusterId: str('Kafka cluster id.', { maxLength: 256 }),
    topicId: str('Kafka topic id.', { maxLength: 256 }),
    owner: str('The owning LogPipeline (namespace/name/uid) recorded on the topic.', { maxLength: 512 }),
    maxMessageBytes: int(
      "The topic's effective max.message.bytes (its own config or the broker default); spec.ingest.syslog.packing.maxBytes must not exceed it.",
      0,
      2_147_483_647,
    ),
  }),
  table: obj('The ClickHouse table as observed.', {
    database: str('Database name.', { maxLength: 256 }),
    table: str('Table name.', { maxLength: 256 }),
    serverIdentity: str('Identity of the ClickHouse server or cluster that holds the table.', {
      maxLength: 512,
    }),
    serverVersion: str('ClickHouse server version.', { maxLength: 128 }),
    owner: str('The owning LogPipeline (namespace/name/uid) recorded in the table COMMENT.', {
      maxLength: 512,
    }),
  }),
  workers: obj('The worker Deployment as observed; also the scale subresource.', {
    desired: int('Replicas the operator wants (fixed or autoscaled).', 0, 1_000_000),
    current: int('Replicas that exist (scale subresource status.replicas).', 0, 1_000_000),
    ready: int('Replicas that are ready.', 0, 1_000_000),
    selector: str('Label selector of the worker pods, in string form (scale subresource).', {
      maxLength: 1024,
    }),
    startingSince: str(
      'Since when the workers a scale-up asked for are starting (WorkersReady True, reason WorkersStarting): the start of their start-up budget, spec.workers.progressDeadline, for pods not created yet. Absent otherwise.',
      { format: 'date-time', maxLength: 64 },
    ),
  }),
  ingest: obj('The syslog receiver (spec.ingest.syslog) as observed.', {
    endpoints: list(
      'Where senders connect, one per listener: <protocol>://<address>:<port> (load balancer address, <node>:<nodePort>, or the cluster IP).',
      str('An endpoint such as tcp://203.0.113.10:514.', { maxLength: 300 }),
      16,
    ),
    desired: int('Receivers asked for (fixed or the HPA current count).', 0, 1_000_000),
    ready: int('Receivers that are ready (Kafka reachable).', 0, 1_000_000),
  }),
  seal: obj('The scheduled daily seal (spec.integrity.seal).', {
    lastSealedDay: str('Newest UTC day (YYYY-MM-DD) sealed in the <table>_seals table.', { maxLength: 10 }),
    lastSealTime: str('When this operator last sealed a day.', { format: 'date-time', maxLength: 64 }),
    lastFailure: str('Why the last seal failed, while it is failing.', { maxLength: 1024 }),
  }),
  parserCoverage: obj(
    'Identity coverage of parsed rows over the last window (the ParserCoverage condition).',
    {
      windowMs: int('Window length in milliseconds.', 0, INT64_MAX_SAFE, 'int64'),
      rows: int('Rows parsed in the window.', 0, INT64_MAX_SAFE, 'int64'),
      missingSrcIp: int('Rows without src_ip in the window.', 0, INT64_MAX_SAFE, 'int64'),
      missingSrcIpPercent: num('Share of rows without src_ip, percent.'),
      topShapes: list(
        'Most frequent hashed line shapes (`<vendor>#<hash>`) of rows without src_ip; never line content.',
        obj('One shape.', {
          shape: str('Vendor and FNV-1a hash of the line prefix with letters and digits folded.', {
            maxLength: 64,
          }),
          rows: int('Rows of this shape in the window.', 0, INT64_MAX_SAFE, 'int64'),
        }),
        5,
      ),
    },
  ),
  lag: obj('Consumer lag of the pipeline consumer group.', {
    total: int('Total lag in messages over all partitions.', 0, INT64_MAX_SAFE, 'int64'),
    maxPartition: int('Largest lag of a single partition, in messages.', 0, INT64_MAX_SAFE, 'int64'),
    smoothed: num('Smoothed total lag the autoscaler acts on.'),
    ratePerSecond: num('Measured consumption rate, messages per second.'),
    lastScaleTime: str('When the autoscaler last changed the replica count.', {
      format: 'date-time',
      maxLength: 64,
    }),
    lastScaleReason: str('Why the autoscaler last changed the replica count.', { maxLength: 1024 }),
  }),
});
