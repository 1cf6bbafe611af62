import { RECEIVER_CONFIG_PATH, RECEIVER_ENTRY, RECEIVER_TLS_DIR } from '../../../common/src/ingest-config';
import { resolveSpec } from '../api/defaults';
import { validPipeline } from '../../../test/fixtures/validate-cases';
import { fullSyslog } from '../../../test/fixtures/validate-cases-ingest';
import type { SyslogIngestSpec } from '../api/types';
import {
  buildIngestConfig,
  buildIngestConfigMap,
  buildIngestDeployment,
  buildIngestHpa,
  buildIngestPdb,
  buildIngestService,
  renderIngestConfig,
  type IngestSpec,
} from './ingest';
import { selectorLabels } from './labels';
import { METRICS_PORT_NAME } from './deployment';
import { RECEIVER_METRICS_PORT_NAME } from '../api/validate-rules-ingest';

function specWith(syslog: SyslogIngestSpec): IngestSpec {
  const lp = validPipeline('fw', 'logs');
  lp.metadata.uid = 'uid-1';
  lp.spec.ingest = { syslog };
  return resolveSpec(lp) as IngestSpec;
}

const simple = (): SyslogIngestSpec => ({
  listeners: [
    { name: 'udp', protocol: 'UDP', port: 514 },
    { name: 'tcp', protocol: 'TCP', port: 514 },
  ],
});

describe('receiver config', () => {
  it('renders listeners on unprivileged container ports, defaults and no TLS', () => {
    const cfg = buildIngestConfig(specWith(simple()));
    expect(cfg.listeners).toEqual([
      { name: 'udp', transport: 'udp', port: 10514 },
      { name: 'tcp', transport: 'tcp', port: 10514, framing: 'auto' },
    ]);
    expect(cfg.packing).toEqual({ maxLines: 1024, maxBytes: 1048576, lingerMs: 100 });
    expect(cfg.compression).toBe('lz4');
    expect(cfg.kafka.topic).toBe('firewall.logs');
    expect(cfg.kafka.sasl).toEqual({ mechanism: 'scram-sha-512' });
    expect(cfg.tls).toBeUndefined();
    expect(cfg.allowedSourceCIDRs).toEqual([]);
  });

  it('points TLS at the mounted files and lowercases clientAuth', () => {
    const cfg = buildIngestConfig(specWith(fullSyslog()));
    expect(cfg.tls).toEqual({
      certFile: `${RECEIVER_TLS_DIR}/tls.crt`,
      keyFile: `${RECEIVER_TLS_DIR}/tls.key`,
      caFile: `${RECEIVER_TLS_DIR}/ca.crt`,
      clientAuth: 'required',
    });
    expect(cfg.listeners.find((l) => l.name === 'tls')).toEqual({
      name: 'tls',
      transport: 'tls',
      port: 6514,
      framing: 'auto',
    });
    expect(cfg.compression).toBe('zstd');
  });

  it('is canonical: the same spec renders the same bytes and hash', () => {
    expect(renderIngestConfig(specWith(simple()))).toEqual(renderIngestConfig(specWith(simple())));
    const cm = buildIngestConfigMap(specWith(simple()), renderIngestConfig(specWith(simple())));
    expect(cm.metadata.name).toBe('fw-ingest-config');
    expect(JSON.parse(cm.data['ingest.json']).listeners).toHaveLength(2);
  });
});

describe('receiver Deployment', () => {
  const spec = specWith(fullSyslog());
  const dep = buildIngestDeployment(spec, renderIngestConfig(spec), 'sv1');
  const pod = dep.spec.template.spec;
  const c = pod.containers[0] as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

  it('runs the receiver entry point of the worker image with the mounted config', () => {
    expect(c.image).toBe(spec.workers.image);
    expect(c.command).toEqual(['/nodejs/bin/node', RECEIVER_ENTRY]);
    expect(c.args).toEqual(['--config', RECEIVER_CONFIG_PATH]);
    expect(c.volumeMounts).toContainEqual({
      name: 'config',
      mountPath: RECEIVER_CONFIG_PATH,
      subPath: 'ingest.json',
      readOnly: true,
    });
    expect(c.env).toContainEqual({ name: 'NODE_OPTIONS', value: '--max-semi-space-size=64' });
  });

  it('gives the pods only the Kafka credentials', () => {
    const names = (c.env as Array<{ name: string }>).map((e) => e.name);
    expect(names).toEqual(expect.arrayContaining(['LP_KAFKA_SASL_USERNAME', 'LP_KAFKA_SASL_PASSWORD']));
    expect(names.filter((n) => /CLICKHOUSE|SIGNING|TSA/.test(n))).toEqual([]);
  });

  it('mounts the cert and client CA as one projected volume', () => {
    const tls = pod.volumes.find((v) => v.name === 'tls') as { projected: { sources: unknown[] } };
    expect(tls.projected.sources).toEqual([
      {
        secret: {
          name: 'syslog-tls',
          items: [
            { key: 'tls.crt', path: 'tls.crt' },
            { key: 'tls.key', path: 'tls.key' },
          ],
        },
      },
      { secret: { name: 'fw-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
    ]);
    expect(c.volumeMounts).toContainEqual({ name: 'tls', mountPath: RECEIVER_TLS_DIR, readOnly: true });
  });

  it('has probes, a preStop pause, a grace period covering the drain, and receiver labels', () => {
    expect(c.readinessProbe.httpGet.path).toBe('/readyz');
    expect(c.livenessProbe.httpGet.path).toBe('/healthz');
    expect(c.lifecycle.preStop.exec.command[0]).toBe('/nodejs/bin/node');
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(30);
    expect(dep.spec.selector.matchLabels['app.kubernetes.io/name']).toBe('logpipeline-ingest');
    // Never selected by the workers' Deployment or pod informer.
    expect(dep.spec.selector.matchLabels).not.toEqual(selectorLabels('fw'));
    expect(dep.metadata.ownerReferences[0]).toMatchObject({
      kind: 'LogPipeline',
      uid: 'uid-1',
      controller: true,
    });
    expect(dep.spec.template.metadata.annotations['logpipeline.io/secrets-hash']).toBe('sv1');
  });

  it('leaves replicas to the HPA when autoscaling, and sets them otherwise', () => {
    expect('replicas' in dep.spec).toBe(false);
    const fixed = specWith(simple());
    expect(buildIngestDeployment(fixed, renderIngestConfig(fixed)).spec.replicas).toBe(2);
  });
});

describe('receiver Service, PDB and HPA', () => {
  it('maps each listener to its container port and keeps the sender address on a LoadBalancer', () => {
    const svc = buildIngestService(specWith(fullSyslog()));
    expect(svc.spec.type).toBe('LoadBalancer');
    expect(svc.spec.ports).toEqual([
      { name: 'udp', protocol: 'UDP', port: 514, targetPort: 10514 },
      { name: 'tcp', protocol: 'TCP', port: 514, targetPort: 10514 },
      { name: 'tcp-601', protocol: 'TCP', port: 601, targetPort: 10601 },
      { name: 'tls', protocol: 'TCP', port: 6514, targetPort: 6514 },
    ]);
    expect(svc.spec.externalTrafficPolicy).toBe('Local');
    expect(svc.spec.loadBalancerSourceRanges).toEqual(['10.0.0.0/8', '192.168.1.0/24', '2001:db8::/32']);
    expect(svc.metadata).toMatchObject({ annotations: { 'metallb.universe.tf/address-pool': 'syslog' } });
  });

  it('defaults to ClusterIP without a traffic policy or source ranges', () => {
    const svc = buildIngestService(specWith({ ...simple(), allowedSourceCIDRs: ['10.0.0.0/8'] }));
    expect(svc.spec.type).toBe('ClusterIP');
    expect(svc.spec).not.toHaveProperty('externalTrafficPolicy');
    expect(svc.spec).not.toHaveProperty('loadBalancerSourceRanges');
  });

  it('defaults NodePort to externalTrafficPolicy Local', () => {
    const svc = buildIngestService(specWith({ ...simple(), service: { type: 'NodePort' } }));
    expect(svc.spec.externalTrafficPolicy).toBe('Local');
  });

  it('builds a PDB and a CPU HPA on the receiver Deployment', () => {
    const spec = specWith(fullSyslog());
    expect(buildIngestPdb(spec).spec).toEqual({
      maxUnavailable: 1,
      selector: {
        matchLabels: { 'app.kubernetes.io/name': 'logpipeline-ingest', 'logpipeline.io/pipeline': 'fw' },
      },
    });
    const hpa = buildIngestHpa(spec);
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'fw-ingest' });
    expect(hpa.spec).toMatchObject({ minReplicas: 2, maxReplicas: 8 });
    expect(hpa.spec.metrics[0].resource.target).toEqual({ type: 'Utilization', averageUtilization: 70 });
  });

  it('names its probe port as the admission rule that keeps listeners off it assumes', () => {
    const container = buildIngestDeployment(
      specWith(fullSyslog()),
      renderIngestConfig(specWith(fullSyslog())),
    ).spec.template.spec.containers[0] as { ports: Array<{ name: string; containerPort: number }> };
    expect(METRICS_PORT_NAME).toBe(RECEIVER_METRICS_PORT_NAME);
    expect(container.ports.at(-1)).toMatchObject({ name: RECEIVER_METRICS_PORT_NAME, containerPort: 8080 });
  });
});
