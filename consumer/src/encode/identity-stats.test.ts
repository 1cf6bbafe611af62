import { BatchEncoder } from './batch';
import { IdentityStats, lineShape, shapeId } from './identity-stats';
import { REFERENCE_COLUMNS } from './reference-columns';

describe('identity coverage counters', () => {
  it('counts rows by vendor, missing identity fields, and hashed shapes of rows without src_ip', () => {
    const identity = new IdentityStats();
    const encoder = new BatchEncoder({
      parser: { format: 'auto', timezone: 'UTC', requiredFields: ['src_ip'] },
      columns: REFERENCE_COLUMNS,
      identity,
    });
    const lines = [
      'date=2024-01-15 time=10:00:00 srcip=10.0.0.1 dstip=10.0.0.2 srcport=1 dstport=2',
      '<13>Jan 15 10:00:00 host1 app: no addresses here 1',
      '<13>Jan 16 11:00:00 host22 app: no addresses here 23',
      'not a format at all',
    ];
    const batch = encoder.encode(
      [{ value: Buffer.from(lines.join('\n')), topic: 't', partition: 0, offset: 0 }],
      Date.UTC(2024, 0, 20),
    );
    expect(batch.rows).toBe(1);
    expect(batch.deadLetters.map((d) => d.reason)).toEqual([
      'missing_field:src_ip',
      'missing_field:src_ip',
      'unknown_format',
    ]);
    const s = identity.drain();
    expect(s.rows).toBe(3);
    expect(s.byVendor).toEqual({ fortigate: 1, rfc3164: 2 });
    expect(s.missing).toEqual({ src_ip: 2, dst_ip: 2, src_port: 2, dst_port: 2 });
    // Both syslog lines have one shape: letters and digits fold into classes, content never leaves.
    const shape = shapeId('rfc3164', lineShape(Buffer.from(lines[1]), 0, lines[1].length));
    expect(s.shapes).toEqual({ [shape]: 2 });
    expect(shape).toMatch(/^rfc3164#[0-9a-f]{8}$/);
    expect(identity.drain().rows).toBe(0);
  });

  it('folds runs of letters and digits, so only the layout changes a shape', () => {
    const h = (t: string) => lineShape(Buffer.from(t), 0, t.length);
    expect(h('Jan 15 10:00:00 fw1 x')).toBe(h('Dec 3 23:59:59 edge42 y'));
    expect(h('a=1 b=2')).not.toBe(h('a:1 b:2'));
  });
});
