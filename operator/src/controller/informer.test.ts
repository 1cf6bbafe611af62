import { KubeApiError, type KubeClient, type WatchEvent } from '../apply/kube-rest';
import { Informer, type CachedObject } from './informer';

type Obj = CachedObject & { metadata: { name: string; namespace: string; resourceVersion: string } };
const obj = (name: string, rv: string): Obj => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });

/**
 * A scripted apiserver for the informer's state machine: each list returns the next scripted
 * list (or throws), each watch plays the next scripted list of events then ends (or throws).
 */
function scripted(lists: Array<Obj[] | Error>, watches: Array<WatchEvent[] | Error>) {
  const calls: string[] = [];
  const client: KubeClient = {
    async request<T>(_m: string, _p: string, opts?: { query?: Record<string, unknown> }): Promise<T> {
      const next = lists.shift();
      calls.push(`list`);
      if (!next) return new Promise<T>(() => undefined);
      if (next instanceof Error) throw next;
      void opts;
      return {
        items: next,
        metadata: { resourceVersion: next.at(-1)?.metadata.resourceVersion ?? '1' },
      } as T;
    },
    async watch(_p, query, onEvent, { signal }) {
      const next = watches.shift();
      calls.push(`watch@${query.resourceVersion}`);
      if (!next)
        return new Promise<void>((resolve) =>
          signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve()),
        );
      if (next instanceof Error) throw next;
      for (const e of next) onEvent(e);
    },
  };
  return { client, calls };
}

function informer(client: KubeClient) {
  const seen: string[] = [];
  const inf = new Informer<Obj>({
    name: 'test',
    client,
    path: '/x',
    transform: (raw) => raw as unknown as Obj,
    backoff: { initialMs: 1, maxMs: 4 },
    handlers: {
      add: (o) => seen.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}`),
      update: (_, o) => seen.push(`update ${o.metadata.name}@${o.metadata.resourceVersion}`),
      delete: (o) => seen.push(`delete ${o.metadata.name}`),
    },
  });
  return { inf, seen };
}

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(cond()).toBe(true);
};

describe('Informer', () => {
  it('lists, then applies watch events from the list resourceVersion, following bookmarks', async () => {
    const ev = (type: WatchEvent['type'], o: Obj): WatchEvent => ({
      type,
      object: o as unknown as Record<string, unknown>,
    });
    const { client, calls } = scripted(
      [[obj('a', '1'), obj('b', '2')]],
      [
        [
          ev('MODIFIED', obj('a', '3')),
          ev('ADDED', obj('c', '4')),
          ev('DELETED', obj('b', '5')),
          ev('BOOKMARK', obj('', '9')),
        ],
      ],
    );
    const { inf, seen } = informer(client);
    inf.start();
    await inf.waitForSync();
    await until(() => calls.includes('watch@9'));
    expect(seen).toEqual(['add a@1', 'add b@2', 'update a@3', 'add c@4', 'delete b']);
    expect(calls.slice(0, 3)).toEqual(['list', 'watch@2', 'watch@9']);
    expect([...inf.list()].map((o) => o.metadata.name).sort()).toEqual(['a', 'c']);
    expect(inf.get('ns', 'a')?.metadata.resourceVersion).toBe('3');
    await inf.stop();
  });

  it('relists at once on 410 Gone and reports only the differences', async () => {
    const gone: WatchEvent = { type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old' } };
    const { client, calls } = scripted(
      [
        [obj('a', '1'), obj('b', '2')],
        [obj('a', '1'), obj('c', '7')],
      ],
      [[gone]],
    );
    const { inf, seen } = informer(client);
    inf.start();
    await until(() => calls.filter((c) => c === 'list').length === 2 && calls.includes('watch@7'));
    expect(seen).toEqual(['add a@1', 'add b@2', 'add c@7', 'delete b']);
    expect(inf.stats.errors).toBe(0);
    await inf.stop();
  });

  it('restarts with backoff after any error, in list or watch', async () => {
    const down = new KubeApiError(0, 'TransportError', 'connect ECONNREFUSED');
    const { client, calls } = scripted(
      [down, down, [obj('a', '1')], [obj('a', '2')]],
      [new KubeApiError(500, 'WatchFailed', 'boom')],
    );
    const { inf, seen } = informer(client);
    const errors: number[] = [];
    (inf as unknown as { opts: { onError: (e: Error, n: number) => void } }).opts.onError = (_e, n) =>
      errors.push(n);
    inf.start();
    await until(() => calls.includes('watch@2'));
    expect(inf.hasSynced()).toBe(true);
    // A list that works does not reset the backoff while the watch right after it still fails.
    expect(errors).toEqual([1, 2, 3]);
    expect(seen).toEqual(['add a@1', 'update a@2']);
    await inf.stop();
  });

  it('keeps running when a handler throws', async () => {
    const { client } = scripted([[obj('a', '1'), obj('b', '2')]], []);
    const inf = new Informer<Obj>({
      name: 't',
      client,
      path: '/x',
      transform: (r) => r as unknown as Obj,
      handlers: {
        add: () => {
          throw new Error('bug');
        },
      },
    });
    inf.start();
    await inf.waitForSync();
    expect(inf.size()).toBe(2);
    await inf.stop();
  });
});
