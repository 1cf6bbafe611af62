/** Schema of spec.workers (see types.ts WorkersSpec / AutoscalingSpec). */
import { DEFAULT_PARTITIONS, DEFAULT_WORKER_IMAGE } from './defaults';
import {
  bool,
  dict,
  duration,
  int,
  list,
  obj,
  oneOf,
  opaque,
  quantity,
  str,
  type JSONSchemaProps,
} from './schema-dsl';

const MAX_REPLICAS = 10_000;

const autoscaling = obj(
  'Scaling of the workers on consumer lag. When enabled, the operator owns the replica count and spec.workers.replicas must be unset.',
  {
    enabled: bool('Turn lag-based autoscaling on. Default false (fixed spec.workers.replicas).'),
    minReplicas: int(
      'Fewest workers. 0 allows scaling to zero when the lag is below activationLag. Default 1.',
      0,
      MAX_REPLICAS,
    ),
    maxReplicas: int(
      `Most workers. Default spec.kafka.topic.partitions (${DEFAULT_PARTITIONS} by default); may not exceed it, since a partition is consumed by one worker only.`,
      1,
      MAX_REPLICAS,
    ),
    lagPerReplica: int(
      'Target lag PER REPLICA (not a total), counted in Kafka messages (offsets), not lines — with producers packing N lines per message, one message of lag is N lines: desired workers = ceil(total lag / lagPerReplica). Default 100000 unless targetDrainTime is set.',
      1,
      1_000_000_000_000,
      'int64',
    ),
    targetDrainTime: duration(
      'Alternative or additional target: enough workers to drain the backlog within this duration at the measured per-worker rate.',
    ),
    activationLag: int(
      'Below this total lag the workload is not activated from zero (and may scale to zero). Default 0.',
      0,
      1_000_000_000_000,
      'int64',
    ),
    scaleUpStabilization: duration(
      'Window over which the LOWEST recommendation is used before scaling up: a spike must last the whole window. Default 0s.',
    ),
    scaleDownStabilization: duration(
      'Window over which the HIGHEST recommendation is used before scaling down (avoids flapping). Default 5m.',
    ),
    maxScaleUpStep: int('Most workers added in one scaling step. Default 4.', 1, MAX_REPLICAS),
    maxScaleDownStep: int('Most workers removed in one scaling step. Default 1.', 1, MAX_REPLICAS),
    pollInterval: duration('How often the lag is measured. Default 15s.'),
  },
);

const batch = obj(
  'How workers batch rows into ClickHouse inserts; a batch is flushed at whichever limit comes first.',
  {
    maxRows: int('Most rows per insert. Default 100000.', 1, 10_000_000),
    maxBytes: int('Most bytes per insert. Default 16777216 (16 MiB).', 1024, 1024 * 1024 * 1024, 'int64'),
    maxDelay: duration(
      'Longest time a row waits in a batch. Default 1s. While a partition has a backlog that fills the batch anyway, the batch keeps filling for up to 4x this (full-size INSERTs when catching up).',
    ),
    maxLinesPerMessage: int(
      'Most non-blank lines taken from one Kafka message; the rest of the message is dead-lettered as one record (reason too_many_lines). Default 100000.',
      1,
      10_000_000,
    ),
  },
);

const resources = obj(
  'CPU and memory of each worker container. Default requests cpu 500m, memory 512Mi; limits memory 1Gi.',
  {
    limits: dict(
      'Limits by resource name (cpu, memory, ephemeral-storage).',
      quantity('A quantity, e.g. 500m or 1Gi.'),
      16,
    ),
    requests: dict(
      'Requests by resource name (cpu, memory, ephemeral-storage).',
      quantity('A quantity, e.g. 500m or 1Gi.'),
      16,
    ),
  },
);

const envVar = opaque(
  'A container environment variable (core/v1 EnvVar).',
  {
    name: str('Variable name.', { minLength: 1, maxLength: 256 }),
    value: str('Literal value.', { maxLength: 32_768 }),
    valueFrom: opaque(
      'Source of the value (core/v1 EnvVarSource: secretKeyRef, configMapKeyRef, fieldRef, resourceFieldRef).',
    ),
  },
  ['name'],
);

/** A core/v1 Toleration (shared with spec.ingest.syslog). */
export const toleration = obj('A toleration (core/v1 Toleration).', {
  key: str('Taint key the toleration applies to; empty means all keys.', { maxLength: 316 }),
  operator: oneOf('Exists or Equal. Default Equal.', ['Exists', 'Equal']),
  value: str('Taint value for operator Equal.', { maxLength: 63 }),
  effect: oneOf('Taint effect to match: NoSchedule, PreferNoSchedule or NoExecute; empty means all.', [
    'NoSchedule',
    'PreferNoSchedule',
    'NoExecute',
  ]),
  tolerationSeconds: int(
    'How long a NoExecute taint is tolerated before eviction.',
    -9_007_199_254_740_991,
    9_007_199_254_740_991,
    'int64',
  ),
});

/** spec.workers */
export const workersSchema: JSONSchemaProps = obj(
  'The worker Deployment that consumes Kafka and inserts into ClickHouse.',
  {
    image: str(`Worker image. Default ${DEFAULT_WORKER_IMAGE}.`, { pattern: '^\\S+$', maxLength: 512 }),
    imagePullPolicy: oneOf('Image pull policy: Always, IfNotPresent or Never. Default IfNotPresent.', [
      'Always',
      'IfNotPresent',
      'Never',
    ]),
    replicas: int(
      'Fixed number of workers when autoscaling is off (also set by `kubectl scale lp`). Default 1; 0 pauses consumption. At most spec.kafka.topic.partitions; must be unset when autoscaling.enabled is true.',
      0,
      MAX_REPLICAS,
    ),
    batch,
    autoscaling,
    resources,
    env: list('Extra environment variables of the worker container.', envVar, 64),
    nodeSelector: dict('Node labels the worker pods must match.', str('Label value.', { maxLength: 63 }), 32),
    tolerations: list('Tolerations of the worker pods.', toleration, 32),
    affinity: opaque('Affinity of the worker pods (core/v1 Affinity).'),
    podAnnotations: dict(
      'Extra annotations of the worker pods.',
      str('Annotation value.', { maxLength: 4096 }),
      32,
    ),
    progressDeadline: duration(
      "A partition that has lag but whose committed offset does not move for this long makes the pipeline Stalled=True (reason PartitionStalled, naming the partition and the last known error), which Flux and Argo CD report as a failure. Also the start-up budget of a scale-up's new workers: Ready stays True (WorkersReady reason WorkersStarting) while they start, and turns False with the pod's reason (e.g. Unschedulable) once one has not become ready this long after its creation. Default 10m.",
    ),
  },
);
