/** Schema of spec.ingest (see types.ts IngestSpec / SyslogIngestSpec). */
import { INGEST_DEFAULTS } from '../../../common/src/ingest-config';
import {
  bool,
  dict,
  duration,
  int,
  keyedList,
  K8S_NAME_PATTERN,
  list,
  obj,
  oneOf,
  opaque,
  quantity,
  secretKeyRef,
  str,
  type JSONSchemaProps,
} from './schema-dsl';
import { toleration } from './schema-workers';

/** A DNS-1123 label (Service port names). */
export const PORT_NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
/** An IPv4 or IPv6 CIDR (v6 loosely: hex groups and colons, prefix 0..128). */
export const CIDR_PATTERN =
  `^(${OCTET}\\.){3}${OCTET}/([0-9]|[12][0-9]|3[0-2])$|` +
  '^[0-9a-fA-F]{0,4}(:[0-9a-fA-F]{0,4}){2,7}/([0-9]|[1-9][0-9]|1[01][0-9]|12[0-8])$';
const MAX_RECEIVERS = 1_000;
const MiB = 1024 * 1024;

const listener = obj(
  'One listening port of the receiver; becomes a port of the Service.',
  {
    name: str('Name of the port (DNS-1123 label, at most 15 characters), e.g. udp, tcp, tls.', {
      pattern: PORT_NAME_PATTERN,
      minLength: 1,
      maxLength: 15,
    }),
    protocol: oneOf(
      'UDP (RFC 5426, one message per datagram, best effort), TCP (RFC 6587) or TLS (RFC 5425, needs spec.ingest.syslog.tls).',
      ['UDP', 'TCP', 'TLS'],
    ),
    port: int(
      'Service port senders use (514, 601, 6514). Ports below 1024 are bound as port+10000 inside the pod (the receiver runs unprivileged); the Service maps them.',
      1,
      65_535,
    ),
    framing: oneOf(
      'TCP/TLS framing: auto (default; a frame starting with digits and a space is RFC 6587 octet-counted, others end at LF) or lf (only line feeds; for raw senders whose lines may start with "123 ").',
      ['auto', 'lf'],
    ),
  },
  ['name', 'protocol', 'port'],
);

const tls = obj(
  'TLS of the TLS listeners (required when one exists).',
  {
    secretRef: obj(
      'Secret of type kubernetes.io/tls with tls.crt and tls.key (cert-manager compatible); a change rolls the receivers.',
      {
        name: str('Name of the Secret in the LogPipeline namespace.', {
          pattern: K8S_NAME_PATTERN,
          minLength: 1,
        }),
      },
      ['name'],
    ),
    clientAuth: oneOf(
      'Client certificates: None (default), Optional (verified when presented) or Required (mutual TLS). Optional and Required need clientCASecretRef.',
      ['None', 'Optional', 'Required'],
    ),
    clientCASecretRef: secretKeyRef(
      'CA bundle that client certificates must chain to.',
      'Key of the PEM CA bundle in the Secret, e.g. ca.crt.',
    ),
  },
  ['secretRef'],
);

const service = obj('The Service in front of the receivers.', {
  type: oneOf('LoadBalancer, NodePort or ClusterIP (default).', ['LoadBalancer', 'NodePort', 'ClusterIP']),
  annotations: dict(
    'Annotations of the Service (e.g. for MetalLB or a cloud load balancer).',
    str('Annotation value.', { maxLength: 4096 }),
    32,
  ),
  loadBalancerIP: str('Requested load balancer address (type LoadBalancer only; provider dependent).', {
    pattern: '^[0-9a-fA-F.:]+$',
    maxLength: 45,
  }),
  externalTrafficPolicy: oneOf(
    'Local (default for LoadBalancer and NodePort) keeps the sender address, which sender_ip and allowedSourceCIDRs rely on; Cluster hides it behind a node address. Not allowed with ClusterIP.',
    ['Local', 'Cluster'],
  ),
});

const autoscaling = obj('CPU autoscaling of the receivers (a HorizontalPodAutoscaler, autoscaling/v2).', {
  enabled: bool('Create the HorizontalPodAutoscaler. Default false (fixed replicas).'),
  minReplicas: int('Fewest receivers. Default 2.', 1, MAX_RECEIVERS),
  maxReplicas: int('Most receivers. Default 6.', 1, MAX_RECEIVERS),
  targetCPUUtilizationPercentage: int(
    'Target average CPU use in percent of the request. Default 70.',
    1,
    100,
  ),
});

const packing = obj(
  'How received lines are packed into Kafka messages (one message per sender, lines joined by LF); a message is cut at whichever limit comes first.',
  {
    maxLines: int(`Most lines per message. Default ${INGEST_DEFAULTS.packing.maxLines}.`, 1, 100_000),
    maxBytes: int(
      `Most bytes per message. Default ${INGEST_DEFAULTS.packing.maxBytes} (1 MiB); at most the topic's max.message.bytes.`,
      1024,
      64 * MiB,
    ),
    linger: duration('Longest time the first line of a message waits, between 1ms and 10s. Default 100ms.'),
  },
);

/** spec.ingest.syslog */
const syslogSchema = obj(
  'A syslog receiver run by the operator (a third entry point of the worker image): firewalls send over UDP, TCP or TLS; lines are packed per sender into Kafka messages (idempotent producer, acks=all) with the sender address, stored as sender_ip.',
  {
    listeners: {
      ...keyedList('Listening ports (names unique; one port per transport).', listener, 'name', 8),
      minItems: 1,
    },
    tls,
    service,
    allowedSourceCIDRs: list(
      'Source addresses allowed to send (IPv4/IPv6 CIDRs); others are dropped and counted. Also the Service loadBalancerSourceRanges for type LoadBalancer. Empty: any.',
      str('A CIDR such as 10.0.0.0/8 or 2001:db8::/32.', { pattern: CIDR_PATTERN, maxLength: 49 }),
      64,
    ),
    replicas: int('Fixed number of receivers when autoscaling is off. Default 2.', 0, MAX_RECEIVERS),
    autoscaling,
    packing,
    compression: oneOf('Compression of the Kafka messages: lz4 (default) or zstd.', ['lz4', 'zstd']),
    maxMessageSize: int(
      `Longest syslog message accepted in bytes; longer ones are dropped and counted (oversize). Default ${INGEST_DEFAULTS.maxFrameBytes}.`,
      480,
      MiB,
    ),
    udpReceiveBuffer: int(
      `SO_RCVBUF of the UDP sockets in bytes (the kernel caps it at net.core.rmem_max). Default ${INGEST_DEFAULTS.udpReceiveBufferBytes}.`,
      65_536,
      256 * MiB,
    ),
    maxBytesHeld: int(
      `Bytes packed but not yet acknowledged by Kafka before TCP reads pause and UDP datagrams are dropped (the memory bound). Default ${INGEST_DEFAULTS.maxBytesHeld}.`,
      MiB,
      4096 * MiB,
      'int64',
    ),
    resources: obj(
      'CPU and memory of each receiver. Default requests cpu 250m, memory 256Mi; limits memory 512Mi.',
      {
        limits: dict('Limits by resource name.', quantity('A quantity, e.g. 500m or 1Gi.'), 16),
        requests: dict(
          'Requests by resource name (the HPA needs a cpu request).',
          quantity('A quantity.'),
          16,
        ),
      },
    ),
    nodeSelector: dict(
      'Node labels the receiver pods must match.',
      str('Label value.', { maxLength: 63 }),
      32,
    ),
    tolerations: list('Tolerations of the receiver pods.', toleration, 32),
    affinity: opaque('Affinity of the receiver pods (core/v1 Affinity).'),
    podAnnotations: dict(
      'Extra annotations of the receiver pods.',
      str('Annotation value.', { maxLength: 4096 }),
      32,
    ),
  },
  ['listeners'],
);

/** spec.ingest */
export const ingestSchema: JSONSchemaProps = obj(
  'How lines get into the topic besides your own producers. Absent: the operator runs no receiver.',
  { syslog: syslogSchema },
);
