/** Spec fixtures shared by the ClickHouse and topic builder tests (no I/O). */
import { resolveSpec, type ResolvedSpec } from '../../api/defaults';
import type { ClickHouseSpec, LogPipeline, LogPipelineSpec } from '../../api/types';

/** A minimal valid LogPipeline with optional overrides of the clickhouse part and the rest of the spec. */
export function pipeline(
  clickhouse: Partial<ClickHouseSpec> = {},
  rest: Partial<LogPipelineSpec> = {},
): LogPipeline {
  return {
    apiVersion: 'logpipeline.io/v1alpha1',
    kind: 'LogPipeline',
    metadata: { name: 'fw', namespace: 'isp', uid: 'uid-1' },
    spec: {
      kafka: { bootstrapServers: ['127.0.0.1:9092'] },
      clickhouse: { url: 'http://127.0.0.1:8123', database: 'logs', table: 'fw', ...clickhouse },
      ...rest,
    },
  };
}

/** resolveSpec(pipeline(...)). */
export function resolved(
  clickhouse: Partial<ClickHouseSpec> = {},
  rest: Partial<LogPipelineSpec> = {},
): ResolvedSpec {
  return resolveSpec(pipeline(clickhouse, rest));
}
