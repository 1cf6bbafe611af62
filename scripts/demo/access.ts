/**
 * What `--keep` prints: what stays running and how to reach and stop it. Pure; the password is
 * never printed, only where to read it (the bed's state file), as `npm run env:up` does.
 */
import path from 'node:path';

/** Facts about the kept stack. */
export interface AccessFacts {
  namespace: string;
  name: string;
  kubeconfig: string;
  apiServer: string;
  kafkaBootstrap: string;
  topic: string;
  clickhouseUrl: string;
  clickhouseUser: string;
  database: string;
  table: string;
  stateFile: string;
  operatorPid: number;
  operatorLog: string;
  podRunnerPid: number;
  podRunnerLog: string;
  /** True when `kubectl` is on PATH. */
  hasKubectl: boolean;
}

/** The instructions, one string per line. */
export function accessLines(f: AccessFacts): string[] {
  const pki = path.join(path.dirname(f.kubeconfig), 'pki');
  const password = `$(node -p "require('${f.stateFile}').clickhouse.password")`;
  const kube = f.hasKubectl
    ? [
        `export KUBECONFIG=${f.kubeconfig}`,
        `kubectl get lp -n ${f.namespace}`,
        `kubectl get lp ${f.name} -n ${f.namespace} -o yaml`,
        `kubectl get deploy,cm,secret -n ${f.namespace}`,
      ]
    : [
        `export KUBECONFIG=${f.kubeconfig}   (kubectl is not installed; the API server is ${f.apiServer})`,
        `curl --cacert ${pki}/ca.crt --cert ${pki}/admin.crt --key ${pki}/admin.key \\`,
        `  ${f.apiServer}/apis/logpipeline.io/v1alpha1/namespaces/${f.namespace}/logpipelines/${f.name}`,
      ];
  return [
    'the stack keeps running:',
    '  the test bed (etcd + kube-apiserver, Kafka, ClickHouse engine), the operator (it keeps',
    '  reconciling and autoscaling) and the local pod runner with its worker processes (they keep',
    '  consuming the topic). Traffic stopped with the demo.',
    '',
    'Kubernetes',
    ...kube.map((l) => `  ${l}`),
    'Kafka',
    `  bootstrap ${f.kafkaBootstrap}, topic ${f.topic}`,
    'ClickHouse',
    `  ${f.clickhouseUrl}  user ${f.clickhouseUser}, password in ${f.stateFile} (.clickhouse.password)`,
    `  curl -s -u ${f.clickhouseUser}:${password} '${f.clickhouseUrl}/' --data-binary 'SELECT count() FROM ${f.database}.${f.table}'`,
    'Processes',
    `  operator    pid ${f.operatorPid}  (log ${f.operatorLog})`,
    `  pod runner  pid ${f.podRunnerPid}  (log ${f.podRunnerLog}; worker logs beside it under pods/)`,
    'Stop everything',
    `  kill -TERM -- -${f.podRunnerPid} -${f.operatorPid}   # process groups: workers drain and commit first`,
    `  LP_TESTBED_FILE=${f.stateFile} npm run env:down`,
  ];
}
