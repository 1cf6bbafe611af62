/**
 * The syslog receiver's Kubernetes objects (spec.ingest.syslog), pure builders: its config
 * (IngestConfig, common/src/ingest-config.ts) in a ConfigMap, a Deployment on the worker image whose
 * container command runs the receiver entry point, the TLS material as a projected Secret volume,
 * and a Service mapping the listeners' ports to the container ports. Same restricted pod security
 * as the workers; only the Kafka credentials reach these pods (never ClickHouse's or the signing key).
 */
import {
  INGEST_DEFAULTS,
  RECEIVER_CONFIG_PATH,
  RECEIVER_ENTRY,
  RECEIVER_TLS_DIR,
  type IngestConfig,
  type ListenerConfig,
} from '../../../common/src/ingest-config';
import { sha256Hex, stableJson } from '../../../common/src/stable-json';
import { SECRET_ENV } from '../../../common/src/worker-config';
import type { ResolvedSpec } from '../api/defaults';
import type { ResolvedIngest } from '../api/defaults-ingest';
import { KAFKA_CA_FILE, KAFKA_CA_MOUNT_PATH, type RenderedConfig } from './configmap';
import { METRICS_PORT_NAME, podBasics } from './deployment';
import {
  CONFIG_HASH_ANNOTATION,
  SECRETS_HASH_ANNOTATION,
  ingestConfigMapName,
  ingestLabels,
  ingestMetadata,
  ingestName,
  ingestSelectorLabels,
} from './labels';

/** Name of the receiver container. */
export const INGEST_CONTAINER = 'receiver';
/** Key of the receiver config in its ConfigMap. */
export const INGEST_CONFIG_FILE = 'ingest.json';
/** Node in the worker image (its ENTRYPOINT runs the worker, so the receiver overrides `command`). */
export const IMAGE_NODE = '/nodejs/bin/node';
/** Seconds the pod keeps serving after it is marked terminating, so endpoints drop it first. */
export const PRESTOP_SECONDS = 5;

/** A receiver pipeline: the resolved spec with its ingest part present. */
export type IngestSpec = ResolvedSpec & { ingest: ResolvedIngest };

function listenerConfig(l: ResolvedIngest['listeners'][number]): ListenerConfig {
  const transport = l.protocol === 'UDP' ? 'udp' : l.protocol === 'TCP' ? 'tcp' : 'tls';
  return {
    name: l.name,
    transport,
    port: l.containerPort,
    ...(transport === 'udp' ? {} : { framing: l.framing }),
  };
}

/** The IngestConfig of `spec` (what the receiver reads from ingest.json). */
export function buildIngestConfig(spec: IngestSpec): IngestConfig {
  const { kafka, ingest } = spec;
  const tls = ingest.tls;
  return {
    pipeline: { namespace: spec.namespace, name: spec.name, uid: spec.uid },
    kafka: {
      brokers: kafka.bootstrapServers,
      topic: kafka.topic.name,
      groupId: kafka.consumerGroup,
      clientId: `logpipeline-ingest-${spec.namespace}-${spec.name}`,
      sasl: kafka.sasl && { mechanism: kafka.sasl.mechanism },
      tls: kafka.tls && {
        enabled: kafka.tls.enabled,
        caFile: kafka.tls.caSecretName ? `${KAFKA_CA_MOUNT_PATH}/${KAFKA_CA_FILE}` : undefined,
        insecureSkipVerify: kafka.tls.insecureSkipVerify,
      },
    },
    compression: ingest.compression,
    listeners: ingest.listeners.map(listenerConfig),
    packing: { ...ingest.packing },
    maxFrameBytes: ingest.maxFrameBytes,
    allowedSourceCIDRs: [...ingest.allowedSourceCIDRs],
    ...(tls
      ? {
          tls: {
            certFile: `${RECEIVER_TLS_DIR}/tls.crt`,
            keyFile: `${RECEIVER_TLS_DIR}/tls.key`,
            ...(tls.clientCA ? { caFile: `${RECEIVER_TLS_DIR}/ca.crt` } : {}),
            clientAuth: tls.clientAuth.toLowerCase() as 'none' | 'optional' | 'required',
          },
        }
      : {}),
    maxBytesHeld: ingest.maxBytesHeld,
    udpReceiveBufferBytes: ingest.udpReceiveBufferBytes,
    drainTimeoutMs: INGEST_DEFAULTS.drainTimeoutMs,
    httpPort: INGEST_DEFAULTS.httpPort,
  };
}

/** Renders the receiver config canonically and hashes it. */
export function renderIngestConfig(spec: IngestSpec): RenderedConfig {
  const json = stableJson(buildIngestConfig(spec), 2) + '\n';
  return { json, hash: sha256Hex(json) };
}

/** The receiver ConfigMap (ingest.json). */
export function buildIngestConfigMap(spec: IngestSpec, config: RenderedConfig) {
  const metadata = ingestMetadata(spec, ingestConfigMapName(spec.name));
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { ...metadata, annotations: { [CONFIG_HASH_ANNOTATION]: config.hash } },
    data: { [INGEST_CONFIG_FILE]: config.json },
  };
}

type Obj = Record<string, unknown>;

function ingestVolumes(spec: IngestSpec): { vols: Obj[]; mounts: Obj[] } {
  const vols: Obj[] = [
    { name: 'config', configMap: { name: ingestConfigMapName(spec.name) } },
    { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } },
  ];
  // subPath: the TLS directory is mounted next to the file, never inside a read-only ConfigMap mount.
  const mounts: Obj[] = [
    { name: 'config', mountPath: RECEIVER_CONFIG_PATH, subPath: INGEST_CONFIG_FILE, readOnly: true },
    { name: 'tmp', mountPath: '/tmp' },
  ];
  const tls = spec.ingest.tls;
  if (tls) {
    const sources: Obj[] = [
      {
        secret: {
          name: tls.secretName,
          items: [
            { key: 'tls.crt', path: 'tls.crt' },
            { key: 'tls.key', path: 'tls.key' },
          ],
        },
      },
    ];
    if (tls.clientCA)
      sources.push({
        secret: { name: tls.clientCA.secretName, items: [{ key: tls.clientCA.key, path: 'ca.crt' }] },
      });
    vols.push({ name: 'tls', projected: { sources } });
    mounts.push({ name: 'tls', mountPath: RECEIVER_TLS_DIR, readOnly: true });
  }
  const kafkaTls = spec.kafka.tls;
  if (kafkaTls?.enabled && kafkaTls.caSecretName) {
    vols.push({
      name: 'kafka-ca',
      secret: {
        secretName: kafkaTls.caSecretName,
        items: [{ key: kafkaTls.caKey ?? KAFKA_CA_FILE, path: KAFKA_CA_FILE }],
      },
    });
    mounts.push({ name: 'kafka-ca', mountPath: KAFKA_CA_MOUNT_PATH, readOnly: true });
  }
  return { vols, mounts };
}

function ingestEnv(spec: IngestSpec): Obj[] {
  const env: Obj[] = [
    // Measured: a larger young generation cuts GC of the packed buffers (about +10% lines per CPU-second).
    { name: 'NODE_OPTIONS', value: '--max-semi-space-size=64' },
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
  ];
  const sasl = spec.kafka.sasl;
  if (sasl)
    for (const [name, key] of [
      [SECRET_ENV.kafkaSaslUser, sasl.usernameKey],
      [SECRET_ENV.kafkaSaslPassword, sasl.passwordKey],
    ])
      env.push({ name, valueFrom: { secretKeyRef: { name: sasl.secretName, key } } });
  return env;
}

function receiverContainer(spec: IngestSpec, mounts: Obj[]): Obj {
  const probe = (path: string, periodSeconds: number, failureThreshold: number) => ({
    httpGet: { path, port: METRICS_PORT_NAME },
    periodSeconds,
    failureThreshold,
    timeoutSeconds: 2,
  });
  const ports = spec.ingest.listeners.map((l) => ({
    name: l.name,
    containerPort: l.containerPort,
    protocol: l.protocol === 'UDP' ? 'UDP' : 'TCP',
  }));
  return {
    name: INGEST_CONTAINER,
    image: spec.workers.image,
    imagePullPolicy: spec.workers.imagePullPolicy,
    command: [IMAGE_NODE, RECEIVER_ENTRY],
    args: ['--config', RECEIVER_CONFIG_PATH],
    env: ingestEnv(spec),
    ports: [...ports, { name: METRICS_PORT_NAME, containerPort: INGEST_DEFAULTS.httpPort, protocol: 'TCP' }],
    resources: spec.ingest.resources,
    livenessProbe: { ...probe('/healthz', 10, 6), initialDelaySeconds: 10 },
    // Fails while Kafka is unreachable, so the Service stops sending new connections here.
    readinessProbe: probe('/readyz', 5, 2),
    // The image has no shell or sleep binary: node sleeps, so endpoints drop the pod before it stops listening.
    lifecycle: {
      preStop: { exec: { command: [IMAGE_NODE, '-e', `setTimeout(() => {}, ${PRESTOP_SECONDS * 1000})`] } },
    },
    securityContext: {
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    volumeMounts: mounts,
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
}

const nonEmpty = <T extends object>(v: T | undefined) => (v && Object.keys(v).length > 0 ? v : undefined);

/** The receiver Deployment; `replicas` is left out when the HPA owns it. */
export function buildIngestDeployment(spec: IngestSpec, config: RenderedConfig, secretsVersion?: string) {
  const { vols, mounts } = ingestVolumes(spec);
  const ing = spec.ingest;
  const drainSeconds = Math.ceil(INGEST_DEFAULTS.drainTimeoutMs / 1000);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: ingestMetadata(spec, ingestName(spec.name)),
    spec: {
      ...(ing.autoscaling.enabled ? {} : { replicas: ing.replicas }),
      revisionHistoryLimit: 3,
      selector: { matchLabels: ingestSelectorLabels(spec.name) },
      // One receiver at a time: the others keep serving while it drains.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: {
          labels: ingestLabels(spec.name),
          annotations: {
            ...ing.podAnnotations,
            [CONFIG_HASH_ANNOTATION]: config.hash,
            ...(secretsVersion ? { [SECRETS_HASH_ANNOTATION]: secretsVersion } : {}),
          },
        },
        spec: {
          // preStop + the receiver's bounded drain (stop reading, flush, await Kafka acks) + margin.
          terminationGracePeriodSeconds: PRESTOP_SECONDS + drainSeconds + 10,
          ...podBasics(ing),
          containers: [receiverContainer(spec, mounts)],
          volumes: vols,
        },
      },
    },
  };
}

/** The Service senders connect to: one port per listener, mapped to the container port. */
export function buildIngestService(spec: IngestSpec) {
  const ing = spec.ingest;
  const svc = ing.service;
  const metadata = ingestMetadata(spec, ingestName(spec.name));
  const lb = svc.type === 'LoadBalancer';
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: nonEmpty(svc.annotations) ? { ...metadata, annotations: svc.annotations } : metadata,
    spec: {
      type: svc.type,
      selector: ingestSelectorLabels(spec.name),
      ports: ing.listeners.map((l) => ({
        name: l.name,
        protocol: l.protocol === 'UDP' ? 'UDP' : 'TCP',
        port: l.port,
        targetPort: l.containerPort,
      })),
      ...(svc.externalTrafficPolicy ? { externalTrafficPolicy: svc.externalTrafficPolicy } : {}),
      ...(svc.loadBalancerIP ? { loadBalancerIP: svc.loadBalancerIP } : {}),
      ...(lb && ing.allowedSourceCIDRs.length > 0
        ? { loadBalancerSourceRanges: [...ing.allowedSourceCIDRs] }
        : {}),
    },
  };
}

/** The receivers' PodDisruptionBudget: a node drain takes one receiver at a time. */
export function buildIngestPdb(spec: IngestSpec) {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: ingestMetadata(spec, ingestName(spec.name)),
    spec: { maxUnavailable: 1, selector: { matchLabels: ingestSelectorLabels(spec.name) } },
  };
}

/** The receivers' HorizontalPodAutoscaler (CPU; receivers are CPU-bound), when autoscaling is on. */
export function buildIngestHpa(spec: IngestSpec) {
  const a = spec.ingest.autoscaling;
  const name = ingestName(spec.name);
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: ingestMetadata(spec, name),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name },
      minReplicas: a.minReplicas,
      maxReplicas: a.maxReplicas,
      metrics: [
        {
          type: 'Resource',
          resource: {
            name: 'cpu',
            target: { type: 'Utilization', averageUtilization: a.targetCPUUtilizationPercentage },
          },
        },
      ],
    },
  };
}
