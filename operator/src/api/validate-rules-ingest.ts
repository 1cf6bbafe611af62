/**
 * Cross-field rules of spec.ingest.syslog, in the shape of validate-rules.ts (which lists them in
 * PIPELINE_RULES): CEL for admission plus the offline mirror, one message for both.
 */
import { DURATION_PATTERN, parseDuration } from './duration';
import type { SyslogIngestSpec, SyslogListenerSpec, SyslogServiceSpec } from './types';
import type { PipelineRule } from './validate-rules';

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
