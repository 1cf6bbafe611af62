/**
 * Cross-field rules of spec.ingest.syslog, in the shape of validate-rules.ts (which lists them in
 * PIPELINE_RULES): CEL for admission plus the offline mirror, one message for both.
 */
import { INGEST_DEFAULTS, containerPortFor } from '../../../common/src/ingest-config';
import { DURATION_PATTERN, parseDuration } from './duration';
import type { LogPipelineSpec, SyslogIngestSpec, SyslogListenerSpec, SyslogServiceSpec } from './types';
import type { PipelineRule } from './validate-rules-define';

type Syslog = SyslogIngestSpec;
type Tls = NonNullable<Syslog['tls']>;
type Autoscaling = NonNullable<Syslog['autoscaling']>;
type Packing = NonNullable<Syslog['packing']>;

interface IngestRuleDef<T> extends Omit<PipelineRule, 'transition' | 'holds' | 'explain'> {
  holds(self: T): boolean;
  explain?(self: T): string;
}

function rule<T>(def: IngestRuleDef<T>): PipelineRule {
  return {
    ...def,
    transition: false,
    holds: (self) => def.holds(self as T),
    explain: (self) => (def.explain ? def.explain(self as T) : (def.message ?? def.rule)),
  };
}

const S = 'spec.ingest.syslog';
const isUdp = (l: SyslogListenerSpec) => l.protocol === 'UDP';
/** Name of the receiver container's metrics/probe port (desired/deployment.ts METRICS_PORT_NAME). */
export const RECEIVER_METRICS_PORT_NAME = 'metrics';
/** The receiver's metrics/probe port inside the pod. */
const PROBE_PORT = INGEST_DEFAULTS.httpPort;
/** CEL of containerPortFor (common/src/ingest-config.ts): ports below 1024 are bound +10000. */
const celContainerPort = (l: string) => `(${l}.port < 1024 ? ${l}.port + 10000 : ${l}.port)`;
/** Kafka's max.message.bytes as a topic config key (CEL map key). */
const MAX_MESSAGE_BYTES = 'max.message.bytes';
const TOPIC_CONFIG = 'self.kafka.topic.config';
const CEL_TOPIC_LIMIT = `${TOPIC_CONFIG}['${MAX_MESSAGE_BYTES}']`;
const CEL_MAX_BYTES = `(has(self.ingest.syslog.packing) && has(self.ingest.syslog.packing.maxBytes) ? self.ingest.syslog.packing.maxBytes : ${INGEST_DEFAULTS.packing.maxBytes})`;

/** packing.maxBytes with its default, and the topic's max.message.bytes when the spec sets a number. */
function packingAgainstTopic(self: LogPipelineSpec): { maxBytes: number; limit?: number } | undefined {
  const syslog = self.ingest?.syslog;
  if (!syslog) return undefined;
  const text = self.kafka?.topic?.config?.[MAX_MESSAGE_BYTES];
  const limit = text !== undefined && /^[0-9]{1,10}$/.test(text) ? Number(text) : undefined;
  return { maxBytes: syslog.packing?.maxBytes ?? INGEST_DEFAULTS.packing.maxBytes, limit };
}

/** Linger bounds: a message waits at least 1 ms and at most 10 s for more lines. */
const LINGER_MIN_MS = 1;
const LINGER_MAX_MS = 10_000;

/** Rules on spec.ingest.syslog. */
export const INGEST_RULES: readonly PipelineRule[] = [
  rule<Syslog>({
    id: 'ingest-tls-listener-needs-tls',
    at: S,
    rule: "!self.listeners.exists(l, l.protocol == 'TLS') || has(self.tls)",
    message: `${S}.tls is required when a listener has protocol TLS: it names the certificate Secret the receiver serves`,
    fieldPath: '.tls',
    reason: 'FieldValueRequired',
    holds: (self) => !self.listeners.some((l) => l.protocol === 'TLS') || self.tls !== undefined,
  }),
  rule<Syslog>({
    id: 'ingest-tls-needs-tls-listener',
    at: S,
    rule: "!has(self.tls) || self.listeners.exists(l, l.protocol == 'TLS')",
    message: `${S}.tls is set but no listener has protocol TLS: add a TLS listener (e.g. port 6514) or remove tls`,
    fieldPath: '.tls',
    holds: (self) => self.tls === undefined || self.listeners.some((l) => l.protocol === 'TLS'),
  }),
  rule<Syslog>({
    id: 'ingest-listener-ports-unique',
    at: S,
    // TCP and TLS share the TCP port space; UDP has its own (UDP 514 and TCP 514 may coexist).
    rule: "self.listeners.all(a, self.listeners.exists_one(b, b.port == a.port && (b.protocol == 'UDP') == (a.protocol == 'UDP')))",
    message: `${S}.listeners must not use one port twice for the same transport (TCP and TLS are both TCP; UDP and TCP may share a port)`,
    fieldPath: '.listeners',
    holds: (self) =>
      self.listeners.every(
        (a) => self.listeners.filter((b) => b.port === a.port && isUdp(b) === isUdp(a)).length === 1,
      ),
  }),
  rule<Syslog>({
    id: 'ingest-container-ports-unique',
    at: S,
    // 514 and 10514 are both bound as 10514 inside the pod (equal Service ports: the rule above).
    rule: `self.listeners.all(a, self.listeners.all(b, (b.protocol == 'UDP') != (a.protocol == 'UDP') || b.port == a.port || ${celContainerPort('b')} != ${celContainerPort('a')}))`,
    message: `${S}.listeners must not bind one pod port twice for the same transport: a port below 1024 is bound as port+10000 (514 and 10514 collide)`,
    fieldPath: '.listeners',
    holds: (self) =>
      self.listeners.every((a) =>
        self.listeners.every(
          (b) =>
            isUdp(b) !== isUdp(a) ||
            b.port === a.port ||
            containerPortFor(b.port) !== containerPortFor(a.port),
        ),
      ),
  }),
  rule<SyslogListenerSpec>({
    id: 'ingest-listener-name-not-metrics',
    at: `${S}.listeners[]`,
    rule: `self.name != '${RECEIVER_METRICS_PORT_NAME}'`,
    message: `${S}.listeners[].name must not be '${RECEIVER_METRICS_PORT_NAME}': the receiver container's metrics and probe port (${PROBE_PORT}) has that name`,
    fieldPath: '.name',
    holds: (self) => self.name !== RECEIVER_METRICS_PORT_NAME,
  }),
  rule<SyslogListenerSpec>({
    id: 'ingest-listener-port-not-probe',
    at: `${S}.listeners[]`,
    rule: `self.protocol == 'UDP' || ${celContainerPort('self')} != ${PROBE_PORT}`,
    message: `${S}.listeners[].port must not be ${PROBE_PORT} for TCP or TLS: the receiver serves /metrics, /healthz and /readyz on that port inside the pod`,
    fieldPath: '.port',
    holds: (self) => self.protocol === 'UDP' || containerPortFor(self.port) !== PROBE_PORT,
  }),
  rule<SyslogListenerSpec>({
    id: 'ingest-framing-tcp-only',
    at: `${S}.listeners[]`,
    rule: "!has(self.framing) || self.protocol != 'UDP'",
    message: `${S}.listeners[].framing applies to TCP and TLS listeners only: a UDP datagram is one message (RFC 5426)`,
    fieldPath: '.framing',
    reason: 'FieldValueForbidden',
    holds: (self) => self.framing === undefined || self.protocol !== 'UDP',
  }),
  rule<Tls>({
    id: 'ingest-client-auth-needs-ca',
    at: `${S}.tls`,
    rule: "!has(self.clientAuth) || self.clientAuth == 'None' || has(self.clientCASecretRef)",
    message: `${S}.tls.clientCASecretRef is required when clientAuth is Optional or Required: client certificates are verified against that CA`,
    fieldPath: '.clientCASecretRef',
    reason: 'FieldValueRequired',
    holds: (self) => (self.clientAuth ?? 'None') === 'None' || self.clientCASecretRef !== undefined,
  }),
  rule<SyslogServiceSpec>({
    id: 'ingest-traffic-policy-external-only',
    at: `${S}.service`,
    rule: "!has(self.externalTrafficPolicy) || (has(self.type) && self.type != 'ClusterIP')",
    message: `${S}.service.externalTrafficPolicy applies to LoadBalancer and NodePort Services only`,
    fieldPath: '.externalTrafficPolicy',
    reason: 'FieldValueForbidden',
    holds: (self) =>
      self.externalTrafficPolicy === undefined || (self.type !== undefined && self.type !== 'ClusterIP'),
  }),
  rule<SyslogServiceSpec>({
    id: 'ingest-load-balancer-ip-needs-lb',
    at: `${S}.service`,
    rule: "!has(self.loadBalancerIP) || (has(self.type) && self.type == 'LoadBalancer')",
    message: `${S}.service.loadBalancerIP applies to type LoadBalancer only`,
    fieldPath: '.loadBalancerIP',
    reason: 'FieldValueForbidden',
    holds: (self) => self.loadBalancerIP === undefined || self.type === 'LoadBalancer',
  }),
  rule<Syslog>({
    id: 'ingest-replicas-or-autoscaling',
    at: S,
    rule: '!has(self.replicas) || !has(self.autoscaling) || !has(self.autoscaling.enabled) || !self.autoscaling.enabled',
    message: `${S}.replicas must not be set when autoscaling.enabled is true: the HorizontalPodAutoscaler owns the replica count (bound it with minReplicas and maxReplicas)`,
    fieldPath: '.replicas',
    reason: 'FieldValueForbidden',
    holds: (self) => self.replicas === undefined || !self.autoscaling?.enabled,
  }),
  rule<Autoscaling>({
    id: 'ingest-min-replicas-within-max',
    at: `${S}.autoscaling`,
    rule: '(has(self.minReplicas) ? self.minReplicas : 2) <= (has(self.maxReplicas) ? self.maxReplicas : 6) || (!has(self.maxReplicas))',
    messageExpression: `'${S}.autoscaling.minReplicas (%d) must not exceed maxReplicas (%d)'.format([has(self.minReplicas) ? self.minReplicas : 2, has(self.maxReplicas) ? self.maxReplicas : 6])`,
    fieldPath: '.minReplicas',
    holds: (self) => self.maxReplicas === undefined || (self.minReplicas ?? 2) <= self.maxReplicas,
    explain: (self) =>
      `${S}.autoscaling.minReplicas (${self.minReplicas ?? 2}) must not exceed maxReplicas (${self.maxReplicas ?? 6})`,
  }),
  rule<Packing>({
    id: 'ingest-linger-range',
    at: `${S}.packing`,
    // A day count is out of range anyway, and CEL's duration() does not parse days.
    rule:
      `!has(self.linger) || !self.linger.matches('${DURATION_PATTERN}') || (!self.linger.contains('d') && ` +
      `duration(self.linger).getMilliseconds() >= ${LINGER_MIN_MS} && duration(self.linger).getMilliseconds() <= ${LINGER_MAX_MS})`,
    message: `${S}.packing.linger must be between 1ms and 10s: longer would hold lines in memory that TCP senders think delivered`,
    fieldPath: '.linger',
    holds: (self) => {
      if (self.linger === undefined) return true;
      const ms = parseDuration(self.linger);
      return ms === undefined || (ms >= LINGER_MIN_MS && ms <= LINGER_MAX_MS);
    },
  }),
];

/** Rules of spec.ingest that compare with other parts of the spec (attached at `spec`). */
export const INGEST_SPEC_RULES: readonly PipelineRule[] = [
  rule<LogPipelineSpec>({
    id: 'ingest-packing-within-topic-limit',
    at: 'spec',
    rule:
      `!has(self.ingest) || !has(self.ingest.syslog) || !has(self.kafka.topic) || !has(${TOPIC_CONFIG}) || ` +
      `!('${MAX_MESSAGE_BYTES}' in ${TOPIC_CONFIG}) || !${CEL_TOPIC_LIMIT}.matches('^[0-9]{1,10}$') || ` +
      `${CEL_MAX_BYTES} <= int(${CEL_TOPIC_LIMIT})`,
    messageExpression: `'${S}.packing.maxBytes (%d) must not exceed max.message.bytes (%s) of spec.kafka.topic.config: Kafka refuses messages larger than the topic allows'.format([${CEL_MAX_BYTES}, ${CEL_TOPIC_LIMIT}])`,
    fieldPath: '.ingest.syslog.packing.maxBytes',
    holds: (self) => {
      const p = packingAgainstTopic(self);
      return p?.limit === undefined || p.maxBytes <= p.limit;
    },
    explain: (self) => {
      const p = packingAgainstTopic(self);
      return `${S}.packing.maxBytes (${p?.maxBytes}) must not exceed max.message.bytes (${p?.limit}) of spec.kafka.topic.config: Kafka refuses messages larger than the topic allows`;
    },
  }),
];
