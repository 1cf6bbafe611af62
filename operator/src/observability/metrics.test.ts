import type { ClickHouseClient } from '@clickhouse/client';
import {
  clickhouseStatementCounts,
  runStatement,
  statementKind,
  statementSummary,
} from '../apply/clickhouse-client';
import { createLogger } from '../../../common/src/log';
import { OperatorMetrics } from './metrics';

const cond = (type: string, status: 'True' | 'False' | 'Unknown') => ({
  type,
  status,
  reason: 'R',
  message: '',
  lastTransitionTime: 'T',
});

describe('OperatorMetrics', () => {
  it('exposes reconcile counters, queue gauges and one condition series per pipeline condition', async () => {
    const m = new OperatorMetrics();
    m.setSources({
      queueDepth: () => 7,
      queueWaiting: () => 3,
      isLeader: () => true,
      informerErrors: () => ({ deployments: 2 }),
    });
    m.observeReconcile('success', 0.01);
    m.observeReconcile('error', 0.2);
    m.setConditions('ns', 'fw', [
      cond('Ready', 'True'),
      cond('TableReady', 'Unknown'),
      cond('Scaling', 'False'),
    ]);
    const text = await m.registry.metrics();
    expect(text).toContain('logpipeline_operator_reconcile_total{result="success"} 1');
    expect(text).toContain('logpipeline_operator_reconcile_errors_total 1');
    expect(text).toContain('logpipeline_operator_reconcile_duration_seconds_count 2');
    expect(text).toContain('logpipeline_operator_queue_depth 7');
    expect(text).toContain('logpipeline_operator_queue_waiting 3');
    expect(text).toContain('logpipeline_operator_leader 1');
    expect(text).toContain('logpipeline_operator_informer_errors{informer="deployments"} 2');
    expect(text).toContain('logpipeline_condition{namespace="ns",name="fw",type="Ready"} 1');
    expect(text).toContain('logpipeline_condition{namespace="ns",name="fw",type="TableReady"} -1');
    expect(text).toContain('logpipeline_condition{namespace="ns",name="fw",type="Scaling"} 0');
    m.setConditions('ns', 'fw', [cond('Ready', 'False')]);
    const fewer = await m.registry.metrics();
    expect(fewer).toContain('logpipeline_condition{namespace="ns",name="fw",type="Ready"} 0');
    expect(fewer).not.toContain('type="Scaling"');
    m.forgetPipeline('ns', 'fw');
    expect(await m.registry.metrics()).not.toContain('name="fw"');
  });
});
describe('logger', () => {
  it('writes one JSON object per line with child fields and level filtering', () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'info', base: { component: 'operator' }, write: (l) => lines.push(l) });
    log.debug('hidden');
    log.child({ namespace: 'ns' }).warn('reconcile failed', { err: new Error('boom') });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({
      level: 'warn',
      msg: 'reconcile failed',
      component: 'operator',
      namespace: 'ns',
      err: 'boom',
    });
  });
});

describe('ClickHouse statement counter', () => {
  it('counts statements by leading keyword and exports them', async () => {
    const client = { command: async () => undefined } as unknown as ClickHouseClient;
    const grants = clickhouseStatementCounts().get('GRANT') ?? 0;
    await runStatement(client, 'GRANT SELECT ON db.* TO `r`');
    await runStatement(client, '  grant `r` TO `u`');
    expect(clickhouseStatementCounts().get('GRANT')).toBe(grants + 2);
    const text = await new OperatorMetrics().registry.metrics();
    expect(text).toContain(`logpipeline_operator_clickhouse_statements_total{kind="GRANT"} ${grants + 2}`);
  });

  it('labels CREATE/ALTER/DROP with the object kind', () => {
    expect(statementKind('CREATE TABLE IF NOT EXISTS x')).toBe('CREATE TABLE');
    expect(statementKind('drop role if exists `a`')).toBe('DROP ROLE');
    expect(statementKind('GRANT `r` TO `u`')).toBe('GRANT');
    expect(statementKind('')).toBe('OTHER');
  });

  it('masks password hashes in statement summaries', () => {
    expect(statementSummary("ALTER USER `w` IDENTIFIED WITH sha256_hash BY 'abc123' SETTINGS x")).toBe(
      "ALTER USER `w` IDENTIFIED WITH sha256_hash BY '***' SETTINGS x",
    );
  });
});
