import { readyPart as ok, statusSpec, workerDeployment } from '../../../test/fixtures/status-testing';
import { computeStatus } from './compute';
import type { ConditionInput } from './conditions';

const spec = statusSpec({ ingest: { syslog: { listeners: [{ name: 'tcp', protocol: 'TCP', port: 514 }] } } });
const workers = workerDeployment(1);
const ingest = (status: ConditionInput['status'], reason: string, stall = false) => ({
  condition: { type: 'IngestReady' as const, status, reason, message: reason },
  ...(stall ? { stall: { reason, message: reason } } : {}),
  status: { endpoints: [], desired: 2, ready: 0 },
});

function run(i: ReturnType<typeof ingest>) {
  const { conditions, extra } = computeStatus(
    spec,
    workers,
    ok('TopicReady'),
    ok('TableReady'),
    undefined,
    undefined,
    {
      ingest: i,
    },
  );
  return { byType: Object.fromEntries(conditions.map((c) => [c.type, c])), extra };
}

describe('computeStatus with a syslog receiver', () => {
  it('gates Ready on IngestReady: not ready means Reconciling (kstatus InProgress), not Stalled', () => {
    const { byType, extra } = run(ingest('False', 'ReceiversUnavailable'));
    expect(byType.IngestReady.status).toBe('False');
    expect(byType.Ready).toMatchObject({ status: 'False', reason: 'IngestNotReady' });
    expect(byType.Reconciling.status).toBe('True');
    expect(byType.Stalled.status).toBe('False');
    expect(extra.ingest).toEqual({ endpoints: [], desired: 2, ready: 0 });
  });

  it('reports a receiver rollout that stopped as Stalled (kstatus Failed)', () => {
    const { byType } = run(ingest('False', 'ProgressDeadlineExceeded', true));
    expect(byType.Stalled).toMatchObject({ status: 'True', reason: 'ProgressDeadlineExceeded' });
    expect(byType.Reconciling.status).toBe('False');
  });

  it('is Ready with a ready receiver', () => {
    const { byType } = run(ingest('True', 'ReceiversAvailable'));
    expect(byType.Ready.status).toBe('True');
    expect(byType.Reconciling.status).toBe('False');
  });
});
