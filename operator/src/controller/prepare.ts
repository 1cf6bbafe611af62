/**
 * Turns a stored LogPipeline into its resolved spec and rendered worker config, or a TerminalError
 * naming why it cannot be (split out of reconciler.ts; pure, no I/O).
 */
import type { WorkerColumn } from '../../../common/src/worker-config';
import { resolveSpec, workerImageAllowlist, type ResolvedSpec } from '../api/defaults';
import type { LogPipeline } from '../api/types';
import { PIPELINE_RULES } from '../api/validate-rules';
import { checkWorkerPolicy } from '../api/worker-policy';
import { buildWorkerColumns, resolveTableSchema } from '../desired/clickhouse';
import { renderWorkerConfig, type RenderedConfig } from '../desired/configmap';
import { checkWorkerColumns } from '../desired/worker-columns';
import { sanitizeMessage } from '../status/sanitize';
import { TerminalError } from './reconcile-types';

const URL_RULE = PIPELINE_RULES.find((r) => r.id === 'no-credentials-in-url')!;

const defaultColumns = (spec: ResolvedSpec) => buildWorkerColumns(resolveTableSchema(spec));

/** A pipeline's resolved spec with the worker config rendered from it. */
export interface PreparedPipeline {
  spec: ResolvedSpec;
  config: RenderedConfig;
}

/** Resolves and checks `lp` and renders its worker config; throws a TerminalError when it cannot. */
export function preparePipeline(
  lp: LogPipeline,
  workerColumns: (spec: ResolvedSpec) => WorkerColumn[] = defaultColumns,
): PreparedPipeline {
  try {
    const spec = resolveSpec(lp);
    // Stored before admission refused it (an older CRD): never render it into the ConfigMap.
    if (!URL_RULE.holds(spec.clickhouse.url, undefined))
      throw new TerminalError('CredentialsInURL', URL_RULE.explain(spec.clickhouse.url, undefined));
    checkWorkerPolicy(spec, workerImageAllowlist());
    const columns = workerColumns(spec);
    // The worker would refuse these columns at startup: say so before deploying it.
    checkWorkerColumns(spec, columns);
    return { spec, config: renderWorkerConfig(spec, columns) };
  } catch (err) {
    const reason = (err as { reason?: unknown }).reason;
    throw new TerminalError(typeof reason === 'string' ? reason : 'InvalidSpec', sanitizeMessage(err));
  }
}
