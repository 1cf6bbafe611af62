import { BatchEncoder, senderHeader, type MessageInput } from './batch';

const INGEST = Date.UTC(2024, 0, 15, 12, 0, 0, 5);

function encode(type: string, senders: Array<string | undefined>): string[] {
  const enc = new BatchEncoder({
    parser: { format: 'auto', timezone: 'UTC' },
    columns: [
      { name: 'sender_ip', type, source: 'sender_ip' },
      { name: 'raw', type: 'String', source: 'raw' },
    ],
    staticFields: {},
    initialBufferBytes: 64,
  });
  const messages: MessageInput[] = senders.map((s, i) => ({
    value: Buffer.from(`<13>line ${i}\n<13>second ${i}`),
    topic: 't',
    partition: 0,
    offset: i,
    sender: s === undefined ? undefined : Buffer.from(s),
  }));
  const out = enc.encode(messages, INGEST);
  expect(out.deadLetters).toEqual([]);
  return out.data.toString().trimEnd().split('\n');
}

describe('sender_ip source', () => {
  it('writes the message header into every row of the packed message; absent is the type default', () => {
    expect(encode('IPv6', ['10.1.2.3', '2001:db8::7', undefined])).toEqual([
      '10.1.2.3\t<13>line 0',
      '10.1.2.3\t<13>second 0',
      '2001:db8::7\t<13>line 1',
      '2001:db8::7\t<13>second 1',
      '::\t<13>line 2',
      '::\t<13>second 2',
    ]);
  });

  it('writes a header that is no address of the column family as absent, never dead-lettering the line', () => {
    expect(encode('IPv4', ['2001:db8::7', 'not-an-ip', '10.0.0.9'])).toEqual([
      '0.0.0.0\t<13>line 0',
      '0.0.0.0\t<13>second 0',
      '0.0.0.0\t<13>line 1',
      '0.0.0.0\t<13>second 1',
      '10.0.0.9\t<13>line 2',
      '10.0.0.9\t<13>second 2',
    ]);
    expect(encode('Nullable(IPv6)', ['bogus', undefined])[0]).toBe('\\N\t<13>line 0');
  });

  it('escapes the header into a String column', () => {
    expect(encode('String', ['a\tb'])[0]).toBe('a\\tb\t<13>line 0');
  });
});

describe('senderHeader', () => {
  it('reads the header as kafkajs hands it: Buffer, string, array or absent', () => {
    expect(senderHeader({ sender: Buffer.from('10.0.0.1') })?.toString()).toBe('10.0.0.1');
    expect(senderHeader({ sender: '::1' })?.toString()).toBe('::1');
    expect(senderHeader({ sender: [Buffer.from('10.0.0.2'), '10.0.0.3'] })?.toString()).toBe('10.0.0.2');
    expect(senderHeader({ other: 'x' })).toBeUndefined();
    expect(senderHeader(undefined)).toBeUndefined();
  });
});

describe('sender_ip source in RowBinary', () => {
  it('writes the header as the 16 address bytes (IPv4 mapped), absent as zeros, never dead-lettering', () => {
    const enc = new BatchEncoder({
      parser: { format: 'auto', timezone: 'UTC' },
      columns: [
        { name: 'sender_ip', type: 'IPv6', source: 'sender_ip' },
        { name: 'kafka_offset', type: 'UInt64', source: 'kafka_offset' },
      ],
      staticFields: {},
      initialBufferBytes: 64,
      format: 'RowBinary',
    });
    const out = enc.encode(
      [
        {
          value: Buffer.from('<13>one'),
          topic: 't',
          partition: 0,
          offset: 7,
          sender: Buffer.from('10.1.2.3'),
        },
        { value: Buffer.from('<13>two'), topic: 't', partition: 0, offset: 8, sender: Buffer.from('bogus') },
      ],
      INGEST,
    );
    expect(out.deadLetters).toEqual([]);
    const row = (ip: number[], offset: number) => {
      const b = Buffer.alloc(24);
      Buffer.from(ip).copy(b, 0);
      b.writeBigUInt64LE(BigInt(offset), 16);
      return b;
    };
    const mapped = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3];
    expect(out.data).toEqual(Buffer.concat([row(mapped, 7), row(new Array(16).fill(0), 8)]));
  });
});
