import { LineParser } from '../../consumer/src/parse/parser';
import { recordToObject } from '../../consumer/src/parse/to-json';
import { mentionsIp, TrafficGenerator } from './traffic';

const NOW = Date.UTC(2026, 11, 2, 10, 0, 0);

function split(messages: Buffer[]): Buffer[] {
  const lines: Buffer[] = [];
  for (const m of messages) {
    let start = 0;
    for (let i = m.indexOf(10); i >= 0; i = m.indexOf(10, start)) {
      lines.push(m.subarray(start, i));
      start = i + 1;
    }
    lines.push(m.subarray(start));
  }
  return lines;
}

describe('demo traffic', () => {
  it('packs exactly linesPerMessage non-empty lines into every message and counts them', () => {
    const gen = new TrafficGenerator({ linesPerMessage: 50, malformedRatio: 0.05, seed: 3 });
    const chunk = gen.next(40, NOW);
    expect(chunk.messages).toHaveLength(40);
    expect(chunk.lines).toBe(2000);
    expect(chunk.bytes).toBe(chunk.messages.reduce((n, m) => n + m.length, 0));
    const lines = split(chunk.messages);
    // The worker splits on LF: the line count it sees is the count the demo reports as produced.
    expect(lines).toHaveLength(2000);
    expect(lines.every((l) => l.length > 0)).toBe(true);
    expect(chunk.messages.every((m) => m[m.length - 1] !== 10)).toBe(true);
  });

  it('mixes the vendors of the sample generator', () => {
    const lines = split(
      new TrafficGenerator({ linesPerMessage: 100, malformedRatio: 0, seed: 1 }).next(100, NOW).messages,
    );
    const share = (re: RegExp) => lines.filter((l) => re.test(l.toString('latin1'))).length / lines.length;
    expect(share(/ devid="FG/)).toBeGreaterThan(0.28); // FortiGate, weight 35
    expect(share(/,(TRAFFIC|THREAT),/)).toBeGreaterThan(0.14); // PAN-OS, 20
    expect(share(/%ASA-\d-\d{6}/)).toBeGreaterThan(0.14); // Cisco ASA, 20
    expect(share(/ kernel: \[.* IN=/)).toBeGreaterThan(0.06); // iptables, 10
    expect(share(/CEF:0\|/)).toBeGreaterThan(0.04); // CEF, 7
    expect(share(/^<\d+>1 /)).toBeGreaterThan(0.005); // RFC 5424, 2
  });

  it('malforms about the requested share of lines, and most of those do not parse', () => {
    const gen = new TrafficGenerator({ linesPerMessage: 50, malformedRatio: 0.02, seed: 11 });
    const chunk = gen.next(400, NOW); // 20,000 lines
    expect(chunk.malformed).toBeGreaterThan(300);
    expect(chunk.malformed).toBeLessThan(500);
    const clean = new TrafficGenerator({ linesPerMessage: 50, malformedRatio: 0, seed: 11 }).next(400, NOW);
    expect(clean.malformed).toBe(0);
    const parser = new LineParser({ format: 'auto', timezone: 'Europe/Istanbul' });
    const failures = (messages: Buffer[]) =>
      split(messages).filter((l) => parser.parse(l, 0, l.length) !== null).length;
    expect(failures(chunk.messages)).toBeGreaterThan(failures(clean.messages) + chunk.malformed / 2);
  });

  it('stamps lines with the clock it is given', () => {
    const lines = split(
      new TrafficGenerator({ linesPerMessage: 20, malformedRatio: 0, seed: 5 }).next(5, NOW).messages,
    );
    const stamped = lines
      .map((l) => /"@timestamp":"([^"]+)"|<\d+>1 (\S+)/.exec(l.toString('utf8')))
      .filter(Boolean);
    expect(stamped.length).toBeGreaterThan(0);
    for (const m of stamped) {
      const t = Date.parse(m![1] ?? m![2]);
      expect(Math.abs(t - NOW)).toBeLessThan(5_000);
    }
  });

  it('is deterministic from the seed', () => {
    const a = new TrafficGenerator({ linesPerMessage: 10, malformedRatio: 0.1, seed: 7 }).next(20, NOW);
    const b = new TrafficGenerator({ linesPerMessage: 10, malformedRatio: 0.1, seed: 7 }).next(20, NOW);
    const c = new TrafficGenerator({ linesPerMessage: 10, malformedRatio: 0.1, seed: 8 }).next(20, NOW);
    expect(Buffer.concat(a.messages).equals(Buffer.concat(b.messages))).toBe(true);
    expect(Buffer.concat(a.messages).equals(Buffer.concat(c.messages))).toBe(false);
  });

  it('picks a FortiGate source IP for the legal query and counts the lines that carry it', () => {
    const gen = new TrafficGenerator({ linesPerMessage: 50, malformedRatio: 0, seed: 2 });
    expect(gen.queryIp).toBeUndefined();
    const lines = split(gen.next(200, NOW).messages);
    const ip = gen.queryIp!;
    expect(ip).toMatch(/^192\.168\.\d+\.\d+$/);
    const first = lines.findIndex((l) => l.toString('latin1').includes(`srcip=${ip} `));
    const expected = lines.slice(first).filter((l) => mentionsIp(l, Buffer.from(ip))).length;
    expect(gen.queryIpMentions).toBe(expected);
    expect(gen.queryIpMentions).toBeGreaterThanOrEqual(1);
  });

  it('counts as records of the IP only the lines parsed with it as source or destination', () => {
    const gen = new TrafficGenerator({ linesPerMessage: 50, malformedRatio: 0.01, seed: 2 });
    const lines = split(gen.next(2000, NOW).messages);
    const ip = gen.queryIp!;
    const parser = new LineParser({ format: 'auto', timezone: 'UTC' });
    const first = lines.findIndex((l) => l.toString('latin1').includes(`srcip=${ip} `));
    const mentioning = lines.slice(first).filter((l) => mentionsIp(l, Buffer.from(ip)));
    // Independent of the generator's parse: the address columns, read from the parser's own record.
    const isRecord = (l: Buffer) => {
      if (parser.parse(l, 0, l.length) !== null) return false;
      const row = recordToObject(parser.record);
      return [row.src_ip, row.dst_ip].some((v) => String(v).replace(/^::ffff:/, '') === ip);
    };
    const records = mentioning.filter(isRecord).length;
    expect(gen.queryIpRecords).toBe(records);
    expect(gen.queryIpRecords).toBeGreaterThanOrEqual(1);
    expect(gen.queryIpRecords).toBeLessThanOrEqual(gen.queryIpMentions);
  });

  it('uses the pipeline parser settings: a line without a required field is no record', () => {
    const make = (requiredFields?: string[]) =>
      new TrafficGenerator({
        linesPerMessage: 50,
        malformedRatio: 0,
        seed: 2,
        parser: { format: 'auto', requiredFields },
      });
    const plain = make();
    const strict = make(['nat_dst_ip']);
    plain.next(2000, NOW);
    strict.next(2000, NOW);
    expect(strict.queryIpMentions).toBe(plain.queryIpMentions);
    // Only some lines carry a NAT destination (PAN-OS sessions do, FortiGate snat lines do not).
    expect(strict.queryIpRecords).toBeGreaterThanOrEqual(1);
    expect(strict.queryIpRecords).toBeLessThan(plain.queryIpRecords);
  });

  it('matches an IP only as a whole token', () => {
    const ip = Buffer.from('10.0.0.1');
    expect(mentionsIp(Buffer.from('src=10.0.0.1 dst=x'), ip)).toBe(true);
    expect(mentionsIp(Buffer.from('inside:10.0.0.1/443'), ip)).toBe(true);
    expect(mentionsIp(Buffer.from('src=10.0.0.12 dst=110.0.0.1'), ip)).toBe(false);
    expect(mentionsIp(Buffer.from('a 10.0.0.10 b 10.0.0.1'), ip)).toBe(true);
    expect(mentionsIp(Buffer.from('10.0.0.1.5'), ip)).toBe(false);
  });
});
