/**
 * kube-controller-manager for the test bed, built by scripts/build-k8s.sh from the same
 * k8s.io/kubernetes module version as kube-apiserver. It runs only the controllers that make the
 * bed behave like a cluster for what the operator relies on:
 * - garbagecollector: ownerReferences cascade (a deleted LogPipeline takes its worker Deployment,
 *   ConfigMap and PodDisruptionBudget with it);
 * - namespace: a deleted namespace is emptied and removed, finalizers permitting.
 * The Deployment/ReplicaSet controllers stay off: the local pod runner stands in for them and for
 * kubelet, and a second actor creating Pods would fight it. ServiceAccount token controllers stay
 * off too (the apiserver runs without the ServiceAccount admission plugin).
 */
import fs from 'node:fs';
import path from 'node:path';
import { startProcess, waitUntil, type ServiceProcess } from './process';
import type { KubernetesBed } from './testbed';

/** Controllers the bed runs. */
export const BED_CONTROLLERS = ['garbagecollector', 'namespace'];

// What the manager logs once the garbage collector runs (its informers are started by then).
const STARTED = /Started controller.*garbage-?collector|garbage-?collector.*Started/i;

/** Command-line of kube-controller-manager for the bed (pure). */
export function controllerManagerArgs(kubeconfig: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--controllers=${BED_CONTROLLERS.join(',')}`,
    // One instance per bed: no lease to wait for at start.
    '--leader-elect=false',
    // No HTTPS endpoint: nothing scrapes it, and it would need its own serving cert and authn.
    '--secure-port=0',
    '--v=1',
  ];
}

/**
 * Starts kube-controller-manager against the bed's apiserver with the admin kubeconfig and waits
 * until its garbage collector is running (it logs that once its caches have synced).
 */
export async function startControllerManager(
  bed: Pick<KubernetesBed, 'kubeconfig'>,
  binary: string,
  dir: string,
  ownerPid: number,
): Promise<ServiceProcess> {
  const logFile = path.join(dir, 'kube-controller-manager.log');
  const proc = startProcess(
    {
      name: 'kube-controller-manager',
      command: binary,
      args: controllerManagerArgs(bed.kubeconfig),
      env: {},
      logFile,
    },
    ownerPid,
  );
  await waitUntil(
    'kube-controller-manager',
    async () => {
      const text = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '';
      return STARTED.test(text);
    },
    { timeoutMs: 90_000, logFile, pid: proc.pid, intervalMs: 300 },
  );
  return proc;
}
