import { BoundedObjectMap } from './bounded-object-map';

describe('BoundedObjectMap', () => {
  it('forgets one pipeline’s keys and keeps the others', () => {
    const m = new BoundedObjectMap<number>(100);
    m.set('ns/a/uid1\u0000Reason', 1);
    m.set('ns/a/uid1\u0000Warning\u0000Other', 2);
    m.set('ns/ab/uid2\u0000Reason', 3);
    m.set('other/a/uid3\u0000Reason', 4);
    m.forget('ns', 'a');
    expect(m.get('ns/a/uid1\u0000Reason')).toBeUndefined();
    expect(m.get('ns/a/uid1\u0000Warning\u0000Other')).toBeUndefined();
    expect(m.get('ns/ab/uid2\u0000Reason')).toBe(3);
    expect(m.get('other/a/uid3\u0000Reason')).toBe(4);
    expect([m.size, m.objects]).toEqual([2, 2]);
  });

  it('drops the oldest key past the bound, from the index too; re-setting a key makes it newest', () => {
    const m = new BoundedObjectMap<number>(2);
    m.set('ns/a/u\u0000x', 1);
    m.set('ns/b/u\u0000x', 2);
    m.set('ns/a/u\u0000x', 3); // now newest: b is the oldest
    m.set('ns/c/u\u0000x', 4);
    expect(m.get('ns/b/u\u0000x')).toBeUndefined();
    expect([m.get('ns/a/u\u0000x'), m.get('ns/c/u\u0000x')]).toEqual([3, 4]);
    expect([m.size, m.objects]).toEqual([2, 2]);
  });

  it('holds no index entry for a fleet that came and went (churn leaves nothing behind)', () => {
    const m = new BoundedObjectMap<number>(64);
    for (let i = 0; i < 1000; i++) {
      m.set(`ns/p${i}/u\u0000Created`, i);
      m.set(`ns/p${i}/u\u0000Normal\u0000Created\u0000msg`, i);
    }
    expect([m.size, m.objects]).toEqual([64, 32]);
    for (let i = 0; i < 1000; i++) m.forget('ns', `p${i}`);
    expect([m.size, m.objects]).toEqual([0, 0]);
  });
});
