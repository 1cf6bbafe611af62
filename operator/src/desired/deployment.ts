/**
 * The worker Deployment. Restricted pod security (non-root, read-only root, no privilege
 * escalation, all capabilities dropped, RuntimeDefault seccomp); secrets only as secretKeyRef env;
 * the config hash in the pod template so a config change rolls the pods, and the hash of the
 * referenced Secrets' versions so a rotated credential rolls them too. With autoscaling on,
 * `spec.replicas` is left out of the applied object: the autoscaler owns it through the scale
 * subresource, and an applier that does not send a field does not fight over it.
 */
import { SECRET_ENV, TSA_SECRET_KEYS } from '../../../common/src/worker-config';
import type { ResolvedSpec } from '../api/defaults';
import { isReservedEnv } from '../api/worker-policy';
import {
  CONFIG_FILE,
  CONFIG_MOUNT_PATH,
  KAFKA_CA_FILE,
  KAFKA_CA_MOUNT_PATH,
  WORKER_HTTP_PORT,
  type RenderedConfig,
} from './configmap';
import { sha256Hex } from '../../../common/src/stable-json';
import {
  CONFIG_HASH_ANNOTATION,
  SECRETS_HASH_ANNOTATION,
  childMetadata,
  commonLabels,
  configMapName,
  selectorLabels,
  workerName,
} from './labels';

/** Name of the worker container. */
export const WORKER_CONTAINER = 'worker';
/** Name of the worker's HTTP port (metrics, health). */
export const METRICS_PORT_NAME = 'metrics';
/** Non-root uid/gid the worker runs as (the distroless "nonroot" user). */
export const WORKER_UID = 65532;

type EnvVar = { name: string; value?: string; valueFrom?: Record<string, unknown> };

function secretEnv(name: string, secretName: string, key: string): EnvVar {
  return { name, valueFrom: { secretKeyRef: { name: secretName, key } } };
}

/** The env vars that carry secrets (values come from Secrets at pod start, never from us). */
export function buildSecretEnv(spec: ResolvedSpec): EnvVar[] {
  const env: EnvVar[] = [];
  const ch = spec.clickhouse.credentials;
  if (ch)
    env.push(
      secretEnv(SECRET_ENV.clickhouseUser, ch.secretName, ch.usernameKey),
      secretEnv(SECRET_ENV.clickhousePassword, ch.secretName, ch.passwordKey),
    );
  const sasl = spec.kafka.sasl;
  if (sasl)
    env.push(
      secretEnv(SECRET_ENV.kafkaSaslUser, sasl.secretName, sasl.usernameKey),
      secretEnv(SECRET_ENV.kafkaSaslPassword, sasl.secretName, sasl.passwordKey),
    );
  const signing = spec.integrity.enabled ? spec.integrity.signingKey : undefined;
  if (signing) env.push(secretEnv(SECRET_ENV.signingKey, signing.secretName, signing.key));
  const tsa = spec.integrity.enabled ? spec.integrity.tsaCredentialsSecret : undefined;
  // Each key is optional (basic auth, a client certificate, a server CA, or a mix).
  for (const [name, key] of tsa ? TSA_SECRET_KEYS : [])
    env.push({ name, valueFrom: { secretKeyRef: { name: tsa, key, optional: true } } });
  return env;
}

function buildEnv(spec: ResolvedSpec): EnvVar[] {
  const own: EnvVar[] = [
    { name: 'LP_CONFIG', value: `${CONFIG_MOUNT_PATH}/${CONFIG_FILE}` },
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    ...buildSecretEnv(spec),
  ];
  const taken = new Set(own.map((e) => e.name));
  // env is a list keyed by name: a duplicate would make the apply fail, and ours must win.
  const user = (spec.workers.env as EnvVar[]).filter(
    (e) => typeof e?.name === 'string' && !taken.has(e.name) && !isReservedEnv(e.name),
  );
  return [...own, ...user];
}

const restrictedContainerSecurity = {
  runAsNonRoot: true,
  readOnlyRootFilesystem: true,
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};

function volumes(spec: ResolvedSpec) {
  const vols: Array<Record<string, unknown>> = [
    { name: 'config', configMap: { name: configMapName(spec.name) } },
    // Read-only root: the worker's scratch space (and Node's tmpdir) lives here.
    { name: 'tmp', emptyDir: { sizeLimit: '256Mi' } },
  ];
  const mounts: Array<Record<string, unknown>> = [
    { name: 'config', mountPath: CONFIG_MOUNT_PATH, readOnly: true },
    { name: 'tmp', mountPath: '/tmp' },
  ];
  const tls = spec.kafka.tls;
  if (tls?.enabled && tls.caSecretName) {
    vols.push({
      name: 'kafka-ca',
      secret: {
        secretName: tls.caSecretName,
        items: [{ key: tls.caKey ?? KAFKA_CA_FILE, path: KAFKA_CA_FILE }],
      },
    });
    mounts.push({ name: 'kafka-ca', mountPath: KAFKA_CA_MOUNT_PATH, readOnly: true });
  }
  return { vols, mounts };
}

function workerContainer(spec: ResolvedSpec, mounts: Array<Record<string, unknown>>) {
  const probe = (path: string, periodSeconds: number, failureThreshold: number) => ({
    httpGet: { path, port: METRICS_PORT_NAME },
    periodSeconds,
    failureThreshold,
    timeoutSeconds: 2,
  });
  return {
    name: WORKER_CONTAINER,
    image: spec.workers.image,
    imagePullPolicy: spec.workers.imagePullPolicy,
    args: ['--config', `${CONFIG_MOUNT_PATH}/${CONFIG_FILE}`],
    env: buildEnv(spec),
    ports: [{ name: METRICS_PORT_NAME, containerPort: WORKER_HTTP_PORT, protocol: 'TCP' }],
    resources: spec.workers.resources,
    livenessProbe: { ...probe('/healthz', 10, 6), initialDelaySeconds: 10 },
    readinessProbe: probe('/readyz', 5, 3),
    securityContext: restrictedContainerSecurity,
    volumeMounts: mounts,
    // A worker that exits on a fatal error writes why here (the worker's termination.ts); when it
    // could not (OOM kill), the kubelet takes the tail of the log instead. The operator reads it.
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
}

function nonEmpty<T extends object>(value: T | undefined): T | undefined {
  if (!value) return undefined;
  return Object.keys(value).length > 0 ? value : undefined;
}

/**
 * A stable hash of the referenced Secrets' `name=resourceVersion` pairs (order-independent); pure.
 * resourceVersion changes on every write of a Secret, so any rotation changes the hash.
 */
export function secretsHash(versions: Array<{ name: string; resourceVersion: string }>): string {
  const text = versions
    .map((v) => `${v.name}=${v.resourceVersion}`)
    .sort()
    .join('\n');
  return sha256Hex(text, 16);
}

/** Where a pod may run, as the spec's workers or ingest section says (empty settings left out). */
export interface PodPlacement {
  nodeSelector?: Record<string, string>;
  tolerations: unknown[];
  affinity?: object;
}

/**
 * Pod-level settings every pod the operator runs shares (workers and syslog receivers): the image's
 * non-root UID, the runtime's seccomp profile, no service-account token or service links (neither
 * talks to the Kubernetes API), and the section's placement.
 */
export function podBasics(placement: PodPlacement) {
  return {
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: WORKER_UID,
      runAsGroup: WORKER_UID,
      fsGroup: WORKER_UID,
      seccompProfile: { type: 'RuntimeDefault' },
    },
    nodeSelector: nonEmpty(placement.nodeSelector),
    tolerations: placement.tolerations.length > 0 ? placement.tolerations : undefined,
    affinity: nonEmpty(placement.affinity),
  };
}

/**
 * The worker Deployment of a pipeline; `replicas` is present only when autoscaling is off.
 * `secretsVersion` (see secretsHash) goes into the pod template when given.
 */
export function buildDeployment(spec: ResolvedSpec, config: RenderedConfig, secretsVersion?: string) {
  const { vols, mounts } = volumes(spec);
  const w = spec.workers;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: childMetadata(spec, workerName(spec.name)),
    spec: {
      ...(w.autoscaling.enabled ? {} : { replicas: w.replicas }),
      revisionHistoryLimit: 3,
      selector: { matchLabels: selectorLabels(spec.name) },
      template: {
        metadata: {
          labels: commonLabels(spec.name),
          annotations: {
            ...w.podAnnotations,
            [CONFIG_HASH_ANNOTATION]: config.hash,
            ...(secretsVersion ? { [SECRETS_HASH_ANNOTATION]: secretsVersion } : {}),
          },
        },
        spec: {
          // A worker flushes its open batch on SIGTERM; give it time before SIGKILL.
          terminationGracePeriodSeconds: 60,
          ...podBasics(w),
          containers: [workerContainer(spec, mounts)],
          volumes: vols,
        },
      },
    },
  };
}
