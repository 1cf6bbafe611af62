/**
 * The env the chart gives the operator container is the env the operator reads: the rendered
 * Deployment's variables, fed to the operator's own config parser, yield the chart's settings.
 */
import type { OperatorConfig } from '../operator/src/main';
import { envOf, FULLNAME, NS, operatorPod, render } from './chart-fixtures';

// main.ts loads the real Kubernetes client; parseConfig never touches the network.

function operatorConfig(values: object): OperatorConfig {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { parseConfig } = require('../operator/src/main') as typeof import('../operator/src/main');
  const env = envOf(operatorPod(render(values)).containers[0]);
  // The downward API fills these in a real pod.
  const resolved = { ...env, POD_NAME: 'operator-7d9f-abcde', POD_NAMESPACE: NS };
  return parseConfig([], resolved);
}

describe('chart env -> operator config', () => {
  it('default values: all namespaces, leader election on the chart Lease, port 8080', () => {
    expect(operatorConfig({})).toEqual({
      kubeconfig: undefined,
      namespaces: [],
      leaderElect: true,
      leaseNamespace: NS,
      leaseName: `${FULLNAME}-leader`,
      metricsPort: 8080,
      concurrency: 32,
      clickhouseDdlInFlight: 4,
      kafkaAdminInFlight: 8,
      externalRecheckMs: 300_000,
      logLevel: 'info',
      identity: 'operator-7d9f-abcde',
    });
  });

  it('watchNamespaces, leader election off, custom port, level and concurrency', () => {
    const cfg = operatorConfig({
      watchNamespaces: ['team-a', 'team-b'],
      leaderElection: { enabled: false },
      metrics: { port: 9091 },
      logLevel: 'debug',
      concurrency: 8,
    });
    expect(cfg).toMatchObject({
      namespaces: ['team-a', 'team-b'],
      leaderElect: false,
      metricsPort: 9091,
      logLevel: 'debug',
      concurrency: 8,
    });
  });
});
