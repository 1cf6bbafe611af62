import { SecretValues } from './secret-values';
import type { SecretView } from '../status/views';

function setup() {
  const rv = new Map<string, string>([['ns/ch', '1']]);
  const data = new Map<string, string>([['ns/ch/password', 'p1']]);
  const lookup = {
    get: (ns: string, name: string): SecretView | undefined => {
      const v = rv.get(`${ns}/${name}`);
      return v === undefined ? undefined : { metadata: { namespace: ns, name, resourceVersion: v } };
    },
  };
  const values = new SecretValues(async (ns, name, key) => data.get(`${ns}/${name}/${key}`), lookup);
  return { rv, data, values };
}

describe('SecretValues', () => {
  it('reads a key once while the resourceVersion holds', async () => {
    const { values } = setup();
    expect(await values.get('ns', 'ch', 'password')).toBe('p1');
    expect(await values.get('ns', 'ch', 'password')).toBe('p1');
    expect(values.reads).toBe(1);
  });

  it('reads again after the Secret changed (new resourceVersion)', async () => {
    const { rv, data, values } = setup();
    await values.get('ns', 'ch', 'password');
    rv.set('ns/ch', '2');
    data.set('ns/ch/password', 'p2');
    expect(await values.get('ns', 'ch', 'password')).toBe('p2');
    expect(values.reads).toBe(2);
  });

  it('caches absent keys, never Secrets the informer does not know', async () => {
    const { values } = setup();
    expect(await values.get('ns', 'ch', 'nope')).toBeUndefined();
    expect(await values.get('ns', 'ch', 'nope')).toBeUndefined();
    expect(values.reads).toBe(1);
    await values.get('ns', 'other', 'k');
    await values.get('ns', 'other', 'k');
    expect(values.reads).toBe(3);
  });

  it('forget drops the values', async () => {
    const { values } = setup();
    await values.get('ns', 'ch', 'password');
    values.forget('ns', 'ch');
    await values.get('ns', 'ch', 'password');
    expect(values.reads).toBe(2);
  });
});
