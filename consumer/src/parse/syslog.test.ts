import { LineParser } from './parser';
import { ms, parseLine } from '../../../test/fixtures/parse-support';
import { recordToObject } from './to-json';

describe('rfc5424', () => {
  it('parses the RFC examples: structured data, NILVALUEs, BOM', () => {
    const row = parseLine(
      'rfc5424',
      '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"] \ufeffAn application event log entry...',
    );
    expect(row).toMatchObject({
      vendor: 'rfc5424',
      timestamp: ms('2003-10-11T22:14:15.003Z'),
      device: 'mymachine.example.com',
      severity: 5,
      message: 'An application event log entry...',
      'field:syslog.app': 'evntslog',
      'field:syslog.msgid': 'ID47',
      'field:iut': '3',
      'field:eventSource': 'Application',
      'field:class': 'high',
    });
    const nil = parseLine('rfc5424', '<34>1 - - - - - -');
    expect(nil).toMatchObject({ timestamp: null, device: null, message: null, severity: 2 });
  });

  it('parses offsets, microseconds and SD escapes', () => {
    const row = parseLine(
      'rfc5424',
      '<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - [a@1 q="say \\"hi\\" \\\\ \\] done" r="\\n"] %% It\'s time to make the do-nuts.',
    );
    expect(row).toMatchObject({
      timestamp: ms('2003-08-24T12:14:15.000Z'),
      device: '192.0.2.1',
      'field:q': 'say "hi" \\ ] done',
      'field:r': '\\n',
      'field:syslog.procid': '8710',
    });
  });

  it.each([
    ['<34>Oct 11 22:14:15 mymachine su: hi', 'bad_header'],
    ['<34>1 2003-10-11T22:14:15.003Z host', 'bad_header'],
    ['<34>1 2003-13-11T22:14:15.003Z host a b c -', 'bad_timestamp'],
    ['<34>1 2003-10-11T22:14:15Z host a b c [broken', 'bad_header'],
    ['<34>1 2003-10-11T22:14:15Z host a b c [id p="v"]x', 'bad_header'],
    ['<999>1 - - - - - -', 'bad_header'],
  ])('dead-letters %s', (line, reason) => {
    expect(parseLine('rfc5424', line)).toEqual({ deadLetter: reason });
  });
});

describe('rfc3164', () => {
  it('parses the RFC example and takes the tag off the message', () => {
    const row = parseLine(
      'rfc3164',
      "<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8",
    );
    expect(row).toMatchObject({
      vendor: 'rfc3164',
      device: 'mymachine',
      severity: 2,
      message: "'su root' failed for lonvick on /dev/pts/8",
      'field:syslog.app': 'su',
    });
    expect(row.timestamp).toBe(ms('2023-10-11T22:14:15Z'));
  });

  it('infers the year so that the stamp is not more than 7 days in the future', () => {
    const at = (line: string, refIso: string): unknown => parseAt(line, Date.parse(refIso));
    expect(at('<13>Dec 31 23:59:59 h a: x', '2024-01-01T00:05:00Z')).toBe(ms('2023-12-31T23:59:59Z'));
    expect(at('<13>Jan  1 00:00:30 h a: x', '2023-12-31T23:59:00Z')).toBe(ms('2024-01-01T00:00:30Z'));
    expect(at('<13>Jan 15 10:00:00 h a: x', '2024-12-02T00:00:00Z')).toBe(ms('2024-01-15T10:00:00Z'));
    expect(at('<13>Feb 29 10:00:00 h a: x', '2024-03-01T00:00:00Z')).toBe(ms('2024-02-29T10:00:00Z'));
  });

  it('reads clock-less stamps in the configured zone, including across DST', () => {
    expect(
      parseLine('rfc3164', '<13>Jan 15 10:00:00 h a: x', { timezone: 'Europe/Istanbul' }).timestamp,
    ).toBe(ms('2024-01-15T07:00:00Z'));
    const ny = (line: string): unknown =>
      parseLine('rfc3164', line, { timezone: 'America/New_York' }).timestamp;
    expect(ny('<13>Jan 15 10:00:00 h a: x')).toBe(ms('2024-01-15T15:00:00Z'));
    expect(ny('<13>Jan 15 2023 10:00:00 h a: x')).toBe(ms('2023-01-15T15:00:00Z'));
    expect(parseLine('rfc3164', '<13>Jan 15 10:00:00 h a: x', { timezone: '+05:30' }).timestamp).toBe(
      ms('2024-01-15T04:30:00Z'),
    );
  });

  it('accepts header variants: no PRI, RFC 3339 stamp, fractional seconds, no host, PRI only', () => {
    expect(parseLine('rfc3164', 'Jan  5 10:00:00 host sshd[42]: Accepted').device).toBe('host');
    expect(parseLine('rfc3164', '<13>2024-01-15T10:00:00.250+03:00 host app: m')).toMatchObject({
      timestamp: ms('2024-01-15T07:00:00.250Z'),
      message: 'm',
    });
    expect(parseLine('rfc3164', '<13>Jan 15 10:00:00.123 host app: m').timestamp).toBe(
      ms('2024-01-15T10:00:00.123Z'),
    );
    expect(parseLine('rfc3164', '<13>Jan 15 10:00:00 sshd[42]: no host here')).toMatchObject({
      device: null,
      message: 'no host here',
      'field:syslog.procid': '42',
    });
    expect(parseLine('rfc3164', '<13>just a message')).toMatchObject({
      timestamp: null,
      message: 'just a message',
      severity: 5,
    });
  });

  it.each([
    ['no header at all', 'bad_header'],
    ['<ab>Jan 15 10:00:00 h a: x', 'bad_header'],
    ['<13>Feb 30 10:00:00 h a: x', 'bad_timestamp'],
  ])('dead-letters %s', (line, reason) => {
    expect(parseLine('rfc3164', line)).toEqual({ deadLetter: reason });
  });
});

/** Timestamp (or dead-letter reason) of a line parsed with reference instant `refMs`. */
function parseAt(line: string, refMs: number): unknown {
  const p = new LineParser({ format: 'rfc3164' });
  p.setReferenceTime(refMs);
  const b = Buffer.from(line);
  return p.parse(b, 0, b.length) ?? recordToObject(p.record).timestamp;
}
