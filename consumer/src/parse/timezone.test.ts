import { createTimeZone } from './timezone';

/** The reference answer: the offset Intl reports at the instant, applied the same two-step way. */
function viaIntl(zone: string, localMs: number): number {
  const offsetAt = (utcMs: number): number => {
    const f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    const v: Record<string, number> = {};
    for (const p of f.formatToParts(new Date(utcMs))) if (p.type !== 'literal') v[p.type] = Number(p.value);
    return Date.UTC(v.year, v.month - 1, v.day, v.hour, v.minute, v.second) - (utcMs - (utcMs % 1000));
  };
  return localMs - offsetAt(localMs - offsetAt(localMs));
}

describe('IANA zone localToUtc', () => {
  // The zone remembers the last 15-minute bucket; answers must not depend on the order of calls.
  it('gives the same answer in any order, across buckets and DST changes', () => {
    const zone = 'Europe/Berlin';
    const base = Date.UTC(2024, 2, 31, 0, 0, 0); // the spring change is at 02:00 local
    const locals: number[] = [];
    for (let m = 0; m < 6 * 60; m += 7) locals.push(base + m * 60_000 + 123);
    locals.push(Date.UTC(2024, 9, 27, 2, 30), Date.UTC(1969, 11, 31, 23, 50), Date.UTC(2024, 0, 1));
    const expected = locals.map((l) => viaIntl(zone, l));
    const forward = createTimeZone(zone);
    expect(locals.map((l) => forward.localToUtc(l))).toEqual(expected);
    const shuffled = createTimeZone(zone);
    const order = locals.map((_, i) => (i * 17) % locals.length);
    for (const i of order) expect(shuffled.localToUtc(locals[i])).toBe(expected[i]);
    // Alternating between two buckets, then back to the first.
    for (let r = 0; r < 3; r++)
      for (const i of [0, locals.length - 1, 0]) expect(shuffled.localToUtc(locals[i])).toBe(expected[i]);
    expect(shuffled.localToUtc(NaN)).toBeNaN();
  });
});
