import { resolveIngest } from '../api/defaults-ingest';
import type { SyslogIngestSpec } from '../api/types';
import {
  ingestCondition,
  ingestEndpoints,
  ingestStatus,
  packingLimitCondition,
  type IngestObservation,
} from './ingest';
import type { DeploymentView, ServiceView } from './views';

const meta = { name: 'fw-ingest', namespace: 'ns', uid: 'u', resourceVersion: '1', ownerReferences: [] };

function deployment(ready: number, extra: Partial<DeploymentView['status']> = {}): DeploymentView {
  return {
    metadata: meta,
    fingerprint: 'f',
    generation: 1,
    replicas: 2,
    ownsReplicas: true,
    status: { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: ready, ...extra },
  };
}

function service(over: Partial<ServiceView> = {}): ServiceView {
  return {
    metadata: meta,
    fingerprint: 'f',
    type: 'ClusterIP',
    clusterIP: '10.96.0.20',
    ingress: [],
    nodePorts: {},
    ...over,
  };
}

function observe(
  syslog: Partial<SyslogIngestSpec>,
  over: Partial<IngestObservation> = {},
): IngestObservation {
  const ingest = resolveIngest({
    listeners: [
      { name: 'udp', protocol: 'UDP', port: 514 },
      { name: 'tcp', protocol: 'TCP', port: 514 },
    ],
    ...syslog,
  })!;
  return { ingest, name: 'fw-ingest', deployment: deployment(2), service: service(), desired: 2, ...over };
}

describe('IngestReady', () => {
  it('is True with the endpoints once a receiver is ready and the Service has an address', () => {
    const { condition, stall } = ingestCondition(observe({}));
    expect(condition).toMatchObject({ type: 'IngestReady', status: 'True', reason: 'ReceiversAvailable' });
    expect(condition.message).toContain('udp://10.96.0.20:514');
    expect(stall).toBeUndefined();
    expect(ingestStatus(observe({}))).toEqual({
      endpoints: ['udp://10.96.0.20:514', 'tcp://10.96.0.20:514'],
      desired: 2,
      ready: 2,
    });
  });

  it.each([
    ['SecretNotFound', { missingSecrets: 'Secret "syslog-tls" (syslog TLS certificate)' }],
    ['DeploymentNotFound', { deployment: undefined }],
    ['ReceiversUnavailable', { deployment: deployment(0) }],
    ['ServiceNotFound', { service: undefined }],
    ['ScaledToZero', { desired: 0 }],
  ] as Array<[string, Partial<IngestObservation>]>)('is False with reason %s', (reason, over) => {
    expect(ingestCondition(observe({}, over)).condition).toMatchObject({ status: 'False', reason });
  });

  it('waits for a load balancer address and names what assigns it', () => {
    const o = observe({ service: { type: 'LoadBalancer' } }, { service: service({ type: 'LoadBalancer' }) });
    const { condition } = ingestCondition(o);
    expect(condition).toMatchObject({ status: 'False', reason: 'LoadBalancerPending' });
    expect(condition.message).toContain('MetalLB');
    const ready = observe(
      { service: { type: 'LoadBalancer' } },
      { service: service({ ingress: ['2001:db8::5'] }) },
    );
    expect(ingestEndpoints(ready.ingest, ready.service)).toEqual([
      'udp://[2001:db8::5]:514',
      'tcp://[2001:db8::5]:514',
    ]);
  });

  it('lists node ports for NodePort', () => {
    const o = observe(
      { service: { type: 'NodePort' } },
      { service: service({ nodePorts: { udp: 30514, tcp: 30515 } }) },
    );
    expect(ingestEndpoints(o.ingest, o.service)).toEqual(['udp://<node>:30514', 'tcp://<node>:30515']);
  });

  it('stays True while the HPA scales running receivers (only the count changed), not RolloutPending', () => {
    const scaled = { ...deployment(2), generation: 2, replicas: 3 };
    expect(ingestCondition(observe({}, { deployment: scaled, desired: 3 })).condition).toMatchObject({
      status: 'True',
      reason: 'ReceiversAvailable',
    });
    const changed = { ...deployment(2), generation: 2 };
    expect(ingestCondition(observe({}, { deployment: changed })).condition).toMatchObject({
      status: 'Unknown',
      reason: 'RolloutPending',
    });
  });

  it('reports a rollout that stopped progressing as a stall', () => {
    const dep = deployment(0, {
      conditions: [
        { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'timed out' },
      ],
    });
    const { condition, stall } = ingestCondition(observe({}, { deployment: dep }));
    expect(condition).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    expect(stall?.reason).toBe('ProgressDeadlineExceeded');
  });
});

describe('IngestReady during a rolling update of serving receivers', () => {
  const available = { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' };
  const progressing = (reason: string) => ({ type: 'Progressing', status: 'True', reason });

  it('stays True (RollingUpdate) with the rollout as progress, from the new template on until complete', () => {
    // The reconcile that applied a new template: the controller's last report is of generation 1.
    const applied = {
      ...deployment(2, { conditions: [available, progressing('NewReplicaSetAvailable')] }),
      generation: 2,
    };
    const pending = ingestCondition(observe({}, { deployment: applied }));
    expect(pending.condition).toEqual({
      type: 'IngestReady',
      status: 'True',
      reason: 'RollingUpdate',
      message:
        'rolling update: the Deployment controller has not observed the latest change yet; 2 receivers ready at udp://10.96.0.20:514, tcp://10.96.0.20:514',
    });
    expect(pending.progress).toEqual({
      reason: 'RollingUpdate',
      message: `receiver Deployment fw-ingest: ${pending.condition.message}`,
    });
    // maxSurge 1: a new receiver starts beside the two old ones.
    const surging = deployment(2, {
      replicas: 3,
      updatedReplicas: 1,
      conditions: [available, progressing('ReplicaSetUpdated')],
    });
    expect(ingestCondition(observe({}, { deployment: surging })).condition).toMatchObject({
      status: 'True',
      reason: 'RollingUpdate',
      message: expect.stringMatching(/^rolling update: 1 of 2 receivers updated, 2 of 3 ready at udp:/),
    });
    const done = deployment(2, { conditions: [available, progressing('NewReplicaSetAvailable')] });
    const after = ingestCondition(observe({}, { deployment: done }));
    expect(after.condition).toMatchObject({ status: 'True', reason: 'ReceiversAvailable' });
    expect(after.progress).toBeUndefined();
  });

  it('is judged as before when no receiver serves or the rollout stopped', () => {
    const none = deployment(0, {
      replicas: 3,
      updatedReplicas: 1,
      conditions: [{ ...available, status: 'False' }, progressing('ReplicaSetUpdated')],
    });
    expect(ingestCondition(observe({}, { deployment: none })).condition).toMatchObject({
      status: 'False',
      reason: 'ReceiversUnavailable',
    });
    const stuck = deployment(2, {
      replicas: 3,
      updatedReplicas: 1,
      conditions: [available, { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }],
    });
    const v = ingestCondition(observe({}, { deployment: stuck }));
    expect(v.condition).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    expect(v.stall?.reason).toBe('ProgressDeadlineExceeded');
  });
});

describe('packingLimitCondition', () => {
  const ingest = (maxBytes?: number) =>
    resolveIngest({ listeners: [{ name: 'tcp', protocol: 'TCP', port: 514 }], packing: { maxBytes } })!;

  it('names both numbers and the topic when packing.maxBytes exceeds max.message.bytes', () => {
    expect(packingLimitCondition(ingest(2_097_152), 'fw.logs', 1_048_588)).toEqual({
      type: 'IngestReady',
      status: 'False',
      reason: 'PackingExceedsTopicLimit',
      message: expect.stringContaining(
        'spec.ingest.syslog.packing.maxBytes (2097152) exceeds max.message.bytes (1048588) of topic fw.logs',
      ),
    });
  });

  it('checks the default (1 MiB) too, and is silent at or below the limit or when the limit is unknown', () => {
    expect(packingLimitCondition(ingest(), 't', 500_000)?.message).toContain(
      '(1048576) exceeds max.message.bytes (500000)',
    );
    expect(packingLimitCondition(ingest(), 't', 1_048_588)).toBeUndefined();
    expect(packingLimitCondition(ingest(1_048_588), 't', 1_048_588)).toBeUndefined();
    expect(packingLimitCondition(ingest(2_097_152), 't', undefined)).toBeUndefined();
  });
});
