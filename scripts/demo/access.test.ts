import { accessLines, type AccessFacts } from './access';

const facts: AccessFacts = {
  namespace: 'demo',
  name: 'firewall',
  kubeconfig: '/tmp/lp/demo/bed/kubernetes/admin.kubeconfig',
  apiServer: 'https://127.0.0.1:6443',
  kafkaBootstrap: '127.0.0.1:9092',
  topic: 'firewall.logs',
  clickhouseUrl: 'http://127.0.0.1:8123',
  clickhouseUser: 'logpipeline',
  database: 'logs',
  table: 'firewall',
  stateFile: '/tmp/lp/state.json',
  operatorPid: 111,
  operatorLog: '/tmp/lp/demo/operator.log',
  podRunnerPid: 222,
  podRunnerLog: '/tmp/lp/demo/pod-runner.log',
  hasKubectl: true,
};

describe('--keep instructions', () => {
  it('say how to reach every part and how to stop it all', () => {
    const text = accessLines(facts).join('\n');
    expect(text).toContain('export KUBECONFIG=/tmp/lp/demo/bed/kubernetes/admin.kubeconfig');
    expect(text).toContain('kubectl get lp -n demo');
    expect(text).toContain('bootstrap 127.0.0.1:9092, topic firewall.logs');
    expect(text).toContain(
      'http://127.0.0.1:8123  user logpipeline, password in /tmp/lp/state.json (.clickhouse.password)',
    );
    expect(text).toContain('SELECT count() FROM logs.firewall');
    expect(text).toContain('kill -TERM -- -222 -111');
    expect(text).toContain('LP_TESTBED_FILE=/tmp/lp/state.json npm run env:down');
  });

  it('fall back to curl with the admin client certificate without kubectl', () => {
    const text = accessLines({ ...facts, hasKubectl: false }).join('\n');
    expect(text).not.toContain('kubectl get');
    expect(text).toContain('the API server is https://127.0.0.1:6443');
    expect(text).toContain(
      'curl --cacert /tmp/lp/demo/bed/kubernetes/pki/ca.crt --cert /tmp/lp/demo/bed/kubernetes/pki/admin.crt',
    );
    expect(text).toContain(
      'https://127.0.0.1:6443/apis/logpipeline.io/v1alpha1/namespaces/demo/logpipelines/firewall',
    );
  });
});
