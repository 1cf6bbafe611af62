/**
 * Defaults of spec.ingest.syslog (the syslog receiver), kept apart from defaults.ts so the receiver's
 * knobs stay in one place; `resolveIngest` never mutates its input.
 */
import { INGEST_DEFAULTS, containerPortFor, type FramingMode } from '../../../common/src/ingest-config';
import { durationMs } from './duration';
import type { SyslogIngestSpec, SyslogProtocol, SyslogServiceSpec } from './types';

/** Receivers when neither replicas nor autoscaling is given: two, so one can be drained at a time. */
export const DEFAULT_INGEST_REPLICAS = 2;

/** One listener with its defaults and the port the process binds. */
export interface ResolvedListener {
  name: string;
  protocol: SyslogProtocol;
  port: number;
  containerPort: number;
  framing: FramingMode;
}

/** spec.ingest.syslog with every default applied. */
export interface ResolvedIngest {
  listeners: ResolvedListener[];
  tls?: {
    secretName: string;
    clientAuth: 'None' | 'Optional' | 'Required';
    clientCA?: { secretName: string; key: string };
  };
  service: Required<Pick<SyslogServiceSpec, 'type'>> & {
    annotations: Record<string, string>;
    loadBalancerIP?: string;
    /** Undefined for ClusterIP (the apiserver refuses the field there). */
    externalTrafficPolicy?: 'Local' | 'Cluster';
  };
  allowedSourceCIDRs: string[];
  replicas: number;
  autoscaling: {
    enabled: boolean;
    minReplicas: number;
    maxReplicas: number;
    targetCPUUtilizationPercentage: number;
  };
  packing: { maxLines: number; maxBytes: number; lingerMs: number };
  compression: 'lz4' | 'zstd';
  maxFrameBytes: number;
  udpReceiveBufferBytes: number;
  maxBytesHeld: number;
  resources: Record<string, unknown>;
  nodeSelector: Record<string, string>;
  tolerations: Array<Record<string, unknown>>;
  affinity?: Record<string, unknown>;
  podAnnotations: Record<string, string>;
}

function resolveService(s: SyslogServiceSpec | undefined): ResolvedIngest['service'] {
  const type = s?.type ?? 'ClusterIP';
  return {
    type,
    annotations: s?.annotations ?? {},
    ...(type === 'LoadBalancer' && s?.loadBalancerIP ? { loadBalancerIP: s.loadBalancerIP } : {}),
    // Local keeps the client's address (no SNAT to a node): sender_ip and the CIDR allow list need it.
    ...(type === 'ClusterIP' ? {} : { externalTrafficPolicy: s?.externalTrafficPolicy ?? 'Local' }),
  };
}

/** Fills the defaults of spec.ingest.syslog; undefined when the pipeline has no receiver. */
export function resolveIngest(s: SyslogIngestSpec | undefined): ResolvedIngest | undefined {
  if (!s) return undefined;
  const as = s.autoscaling ?? {};
  const minReplicas = as.minReplicas ?? DEFAULT_INGEST_REPLICAS;
  return {
    listeners: s.listeners.map((l) => ({
      name: l.name,
      protocol: l.protocol,
      port: l.port,
      containerPort: containerPortFor(l.port),
      framing: l.framing ?? 'auto',
    })),
    tls: s.tls && {
      secretName: s.tls.secretRef.name,
      clientAuth: s.tls.clientAuth ?? 'None',
      ...(s.tls.clientCASecretRef && (s.tls.clientAuth ?? 'None') !== 'None'
        ? { clientCA: { secretName: s.tls.clientCASecretRef.name, key: s.tls.clientCASecretRef.key } }
        : {}),
    },
    service: resolveService(s.service),
    allowedSourceCIDRs: s.allowedSourceCIDRs ?? [],
    replicas: s.replicas ?? DEFAULT_INGEST_REPLICAS,
    autoscaling: {
      enabled: as.enabled ?? false,
      minReplicas,
      maxReplicas: as.maxReplicas ?? Math.max(6, minReplicas),
      targetCPUUtilizationPercentage: as.targetCPUUtilizationPercentage ?? 70,
    },
    packing: {
      maxLines: s.packing?.maxLines ?? INGEST_DEFAULTS.packing.maxLines,
      maxBytes: s.packing?.maxBytes ?? INGEST_DEFAULTS.packing.maxBytes,
      lingerMs: s.packing?.linger ? durationMs(s.packing.linger) : INGEST_DEFAULTS.packing.lingerMs,
    },
    compression: s.compression ?? INGEST_DEFAULTS.compression,
    maxFrameBytes: s.maxMessageSize ?? INGEST_DEFAULTS.maxFrameBytes,
    udpReceiveBufferBytes: s.udpReceiveBuffer ?? INGEST_DEFAULTS.udpReceiveBufferBytes,
    maxBytesHeld: s.maxBytesHeld ?? INGEST_DEFAULTS.maxBytesHeld,
    resources: s.resources ?? { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '512Mi' } },
    nodeSelector: s.nodeSelector ?? {},
    tolerations: s.tolerations ?? [],
    affinity: s.affinity,
    podAnnotations: s.podAnnotations ?? {},
  };
}
