import type { LogPipeline } from '../api/types';
import type { KubeClient } from '../apply/kube-rest';
import { silentLogger } from '../../../common/src/log';
import type { ConditionInput } from '../status/conditions';
import { StatusWriter } from './status-writer';

/** An apiserver keeping one LogPipeline: status merge patches bump its resourceVersion. */
function fakeServer(lp: LogPipeline) {
  let stored = lp;
  const requests: string[] = [];
  const client: KubeClient = {
    async request<T>(method: string, path: string, opts?: { body?: unknown }): Promise<T> {
      requests.push(`${method} ${path.split('/').slice(-2).join('/')}`);
      if (path.endsWith('/status')) {
        const { status } = opts!.body as { status: LogPipeline['status'] };
        const rv = String(Number(stored.metadata.resourceVersion) + 1);
        stored = { ...stored, metadata: { ...stored.metadata, resourceVersion: rv }, status };
        return stored as T;
      }
      return { metadata: { name: 'ev', resourceVersion: '1' } } as T;
    },
    watch: async () => undefined,
  };
  return { client, requests, stored: () => stored };
}

const lp: LogPipeline = {
  apiVersion: 'logpipeline.io/v1alpha1',
  kind: 'LogPipeline',
  metadata: { name: 'fw', namespace: 'isp', uid: 'u1', generation: 1, resourceVersion: '10' },
  spec: {} as LogPipeline['spec'],
};
const ready = (status: 'True' | 'False'): ConditionInput => ({
  type: 'Ready',
  status,
  reason: status === 'True' ? 'PipelineReady' : 'WorkersNotReady',
  message: 'm',
});

describe('StatusWriter and a cache that has not seen its write yet (issue 18)', () => {
  it('judges the stale object by the status it wrote: no second write, no second Event', async () => {
    const server = fakeServer(lp);
    const writer = new StatusWriter(server.client, 'test', silentLogger);
    expect(await writer.write(lp, [ready('False')], {})).toBe(true);
    // The informer still hands out resourceVersion 10 (no status).
    expect(await writer.write(lp, [ready('False')], {})).toBe(false);
    expect(await writer.write(lp, [ready('True')], {})).toBe(true);
    expect(await writer.write(lp, [ready('True')], {})).toBe(false);
    expect(server.requests.filter((r) => r.endsWith('/status'))).toHaveLength(2);
    // Ready appearing False and its recovery to True: one Event each, said once.
    expect(server.requests.filter((r) => r.endsWith('/events'))).toHaveLength(2);
    // Once the cache has the stored object, that is what counts.
    expect(await writer.write(server.stored(), [ready('True')], {})).toBe(false);
    const edited = { ...server.stored(), status: {}, metadata: { ...lp.metadata, resourceVersion: '99' } };
    expect(await writer.write(edited, [ready('True')], {})).toBe(true);
  });
});
