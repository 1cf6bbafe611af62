/**
 * IngestReady and status.ingest of a pipeline with a syslog receiver (pure): True once a receiver is
 * ready and the Service has an address senders can use; the endpoints name that address per listener.
 */
import type { ResolvedIngest } from '../api/defaults-ingest';
import type { LogPipelineStatus } from '../api/types';
import type { ConditionInput } from './conditions';
import type { InProgress, StallCause } from './kstatus';
import type { DeploymentView, ServiceView } from './views';
import { onlyCountChanges } from './workers-starting';
import { deploymentCondition, rollingOut, ROLLING_UPDATE, servesThroughRollout } from './workers-rollout';

/** What one reconcile saw of the receiver. */
export interface IngestObservation {
  ingest: ResolvedIngest;
  deployment?: DeploymentView;
  service?: ServiceView;
  /** Replicas asked for: spec.ingest.syslog.replicas, or the HPA's current count. */
  desired: number;
  /** Secrets the receiver needs that do not exist ("Secret "x" (purpose)", joined). */
  missingSecrets?: string;
  /** Name of the Deployment and Service. */
  name: string;
}

const hostPort = (address: string, port: number) =>
  address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;

/**
 * `udp://203.0.113.10:514`-style endpoints: the load balancer's address for LoadBalancer, any node
 * on its node port for NodePort (`<node>`), the cluster IP for ClusterIP; empty while there is none.
 */
export function ingestEndpoints(ingest: ResolvedIngest, svc: ServiceView | undefined): string[] {
  if (!svc) return [];
  const scheme = (p: string) => p.toLowerCase();
  if (ingest.service.type === 'LoadBalancer') {
    const address = svc.ingress[0];
    return address ? ingest.listeners.map((l) => `${scheme(l.protocol)}://${hostPort(address, l.port)}`) : [];
  }
  if (ingest.service.type === 'NodePort') {
    return ingest.listeners
      .filter((l) => svc.nodePorts[l.name] !== undefined)
      .map((l) => `${scheme(l.protocol)}://<node>:${svc.nodePorts[l.name]}`);
  }
  const ip = svc.clusterIP;
  return ip ? ingest.listeners.map((l) => `${scheme(l.protocol)}://${hostPort(ip, l.port)}`) : [];
}

function addressProblem(o: IngestObservation): { reason: string; message: string } | undefined {
  const svc = o.service;
  if (!svc) return { reason: 'ServiceNotFound', message: `Service ${o.name} does not exist yet` };
  if (ingestEndpoints(o.ingest, svc).length > 0) return undefined;
  if (o.ingest.service.type === 'LoadBalancer')
    return {
      reason: 'LoadBalancerPending',
      message: `Service ${o.name} has no load balancer address yet: a load balancer implementation (cloud provider, MetalLB) must assign one`,
    };
  return { reason: 'ServiceAddressPending', message: `Service ${o.name} has no address yet` };
}

/** IngestReady and, when a rollout stopped or serves through, the cause for Stalled or Reconciling. */
export interface IngestVerdict {
  condition: ConditionInput;
  stall?: StallCause;
  progress?: InProgress;
}

/** IngestReady for the observed receiver; `stall` is set when its rollout stopped progressing. */
export function ingestCondition(o: IngestObservation): IngestVerdict {
  const c = (status: ConditionInput['status'], reason: string, message: string): ConditionInput => ({
    type: 'IngestReady',
    status,
    reason,
    message,
  });
  if (o.missingSecrets)
    return {
      condition: c('False', 'SecretNotFound', `${o.missingSecrets} not found; the receiver cannot start`),
    };
  const dep = o.deployment;
  if (!dep)
    return {
      condition: c('False', 'DeploymentNotFound', `receiver Deployment ${o.name} does not exist yet`),
    };
  // An HPA scale bumps the generation too: judged by counts at once, not as a pending rollout.
  const pending = (dep.status.observedGeneration ?? 0) < dep.generation && !onlyCountChanges(dep);
  const rolling = pending || rollingOut(dep, o.desired);
  if (rolling && o.desired > 0 && servesThroughRollout(dep, pending)) {
    const serving = receiversServing(o, pending);
    if (serving) return serving;
  }
  if (pending)
    return {
      condition: c('Unknown', 'RolloutPending', `Deployment ${o.name}: latest change not yet observed`),
    };
  const progressing = dep.status.conditions?.find((x) => x.type === 'Progressing');
  if (progressing?.status === 'False') {
    const reason = progressing.reason || 'ProgressDeadlineExceeded';
    const message = `receiver Deployment ${o.name}: ${progressing.message || 'not progressing'}`;
    return { condition: c('False', reason, message), stall: { reason, message } };
  }
  if (o.desired === 0)
    return {
      condition: c('False', 'ScaledToZero', 'no receivers requested (replicas 0): senders cannot connect'),
    };
  const ready = dep.status.readyReplicas ?? 0;
  if (ready === 0)
    return {
      condition: c(
        'False',
        'ReceiversUnavailable',
        `0 of ${o.desired} receivers ready (a receiver is not ready while it cannot reach Kafka)`,
      ),
    };
  const problem = addressProblem(o);
  if (problem) return { condition: c('False', problem.reason, problem.message) };
  const endpoints = ingestEndpoints(o.ingest, o.service);
  return {
    condition: c(
      'True',
      'ReceiversAvailable',
      `${ready} of ${o.desired} receivers ready at ${endpoints.join(', ')}`,
    ),
  };
}

/**
 * IngestReady True (RollingUpdate) while receivers that serve are replaced, with the rollout as
 * Reconciling's cause; undefined when senders could not connect anyway (judged as before).
 */
function receiversServing(o: IngestObservation, pending: boolean): IngestVerdict | undefined {
  if (deploymentCondition(o.deployment!, 'Progressing')?.status === 'False') return undefined;
  if (addressProblem(o)) return undefined;
  const st = o.deployment!.status;
  const counts = pending
    ? `the Deployment controller has not observed the latest change yet; ${st.readyReplicas ?? 0} receivers ready`
    : `${st.updatedReplicas ?? 0} of ${o.desired} receivers updated, ${st.readyReplicas ?? 0} of ${st.replicas ?? 0} ready`;
  const message = `rolling update: ${counts} at ${ingestEndpoints(o.ingest, o.service).join(', ')}`;
  return {
    condition: { type: 'IngestReady', status: 'True', reason: ROLLING_UPDATE, message },
    progress: { reason: ROLLING_UPDATE, message: `receiver Deployment ${o.name}: ${message}` },
  };
}

/** status.ingest for the observation. */
export function ingestStatus(o: IngestObservation): NonNullable<LogPipelineStatus['ingest']> {
  return {
    endpoints: ingestEndpoints(o.ingest, o.service),
    desired: o.desired,
    ready: o.deployment?.status.readyReplicas ?? 0,
  };
}

/** Reason of IngestReady when a packed message could be larger than the topic accepts. */
export const PACKING_EXCEEDS_TOPIC_LIMIT = 'PackingExceedsTopicLimit';

/**
 * IngestReady=False when packing.maxBytes exceeds the topic's max.message.bytes as the broker
 * reports it (admission refuses it when both are in the spec; the broker default is only known
 * here): every full message would be refused by the broker and the receiver would retry for ever.
 */
export function packingLimitCondition(
  ingest: ResolvedIngest,
  topic: string,
  maxMessageBytes: number | undefined,
): ConditionInput | undefined {
  const maxBytes = ingest.packing.maxBytes;
  if (maxMessageBytes === undefined || maxBytes <= maxMessageBytes) return undefined;
  return {
    type: 'IngestReady',
    status: 'False',
    reason: PACKING_EXCEEDS_TOPIC_LIMIT,
    message:
      `spec.ingest.syslog.packing.maxBytes (${maxBytes}) exceeds max.message.bytes (${maxMessageBytes}) of topic ${topic}: ` +
      'Kafka would refuse full messages; lower packing.maxBytes or raise the topic config. The receiver is not rolled out',
  };
}
