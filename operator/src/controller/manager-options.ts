/**
 * The manager's configuration types (split out of manager.ts): leader election and everything the
 * running operator is built from.
 */
import type { Logger } from '../../../common/src/log';
import type { KubeConfig } from '../apply/kube-lib';
import type { OperatorMetrics } from '../observability/metrics';
import type { ReconcilerOptions } from './reconcile-types';
import type { WorkQueueOptions } from './workqueue';

/** Leader-election settings (client-go defaults: 15 s / 10 s / 2 s). */
export interface LeaderElectionConfig {
  namespace: string;
  name: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

/** Everything the manager needs. */
export interface ManagerOptions {
  kubeConfig: KubeConfig;
  /** Namespaces to watch; empty = all. */
  namespaces: string[];
  /** Parallel reconciles (different keys only). Default DEFAULT_CONCURRENCY. */
  concurrency?: number;
  /** Off: this instance reconciles right away (single replica, tests). */
  leaderElection?: LeaderElectionConfig | false;
  /** Unique name of this instance (pod name). */
  identity: string;
  log?: Logger;
  metrics?: OperatorMetrics;
  queue?: WorkQueueOptions;
  resyncMs?: number;
  /** How long a clean Topic/Table outcome is reused before the next real check (part-memo.ts); 0: never. */
  externalRecheckMs?: number;
  workerColumns?: ReconcilerOptions['workerColumns'];
}
