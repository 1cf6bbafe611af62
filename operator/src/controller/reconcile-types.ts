/**
 * The reconciler's contract types: what a reconcile returns, the error that stops retrying, and
 * the dependencies it is built from (split out of reconciler.ts to keep it readable).
 */
import type { WorkerColumn } from '../../../common/src/worker-config';
import type { Logger } from '../../../common/src/log';
import type { ResolvedSpec } from '../api/defaults';
import type { LogPipeline } from '../api/types';
import type { DestructiveGuard } from '../apply/guard';
import type { KubeClient } from '../apply/kube-rest';
import type { SecretView } from '../status/views';
import type { ChildCaches, Lookup } from './children';
import type { StatusObserver } from './status-writer';

/** What the work loop does after a reconcile. */
export interface ReconcileResult {
  /** Run again after this delay (timed work, periodic drift check). */
  requeueAfterMs?: number;
  /** Run again with the key's exponential backoff (a transient condition, e.g. a missing Secret). */
  requeue?: boolean;
}

/** An error that retrying cannot fix (an invalid spec): reported as a False condition. */
export class TerminalError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** Dependencies and tuning of the reconciler. */
export interface ReconcilerOptions {
  client: KubeClient;
  pipelines: Lookup<LogPipeline>;
  secrets: Lookup<SecretView>;
  children: ChildCaches;
  log?: Logger;
  /** Name of this operator instance (Event reportingInstance). */
  identity?: string;
  /** Periodic re-check of every pipeline (drift of external parts). Default 10 min. */
  resyncMs?: number;
  /** Columns the worker fills; default: the ClickHouse schema builder. */
  workerColumns?: (spec: ResolvedSpec) => WorkerColumn[];
  observer?: StatusObserver;
  now?: () => Date;
  /** Every cached pipeline, or those claiming one of `naming` (PartContext.pipelines); default none. */
  allPipelines?: (naming?: readonly string[]) => Iterable<LogPipeline>;
  /** The current leadership term's guard of destructive statements; default: never refuses. */
  guard?: () => DestructiveGuard;
  /** Reuse of clean Topic/Table outcomes (part-memo.ts); 0 turns it off. Default 5 min. */
  externalRecheckMs?: number;
  /** Queues a pipeline key (`namespace/name`): peers of a changed claim are judged again at once. */
  enqueue?: (key: string) => void;
  /** Bound on deletionPolicy Delete before it falls back to Retain (finalize.ts). */
  deleteTimeoutMs?: number;
}
