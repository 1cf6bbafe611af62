import dgram from 'node:dgram';
import net from 'node:net';
import { FlowGate } from './flow-gate';
import { KafkaSink } from './kafka-sink';
import type { PackedMessage } from './packer';
import { SyslogReceiver, normalizeAddress, sourceFilter } from './receiver';

const until = async (cond: () => boolean, ms = 3_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

function collect() {
  const got: PackedMessage[] = [];
  return {
    got,
    lines: () => got.flatMap((m) => m.value.toString().split('\n')),
    enqueue: (m: PackedMessage) => got.push({ ...m, value: Buffer.from(m.value) }),
  };
}

const send = (port: number, data: string | Buffer) =>
  new Promise<void>((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.end(data, () => resolve()));
    s.on('error', reject);
  });

describe('SyslogReceiver on loopback', () => {
  let r: SyslogReceiver | undefined;
  afterEach(async () => {
    await r?.stop();
    r = undefined;
  });

  it('frames TCP (LF and octet-counted) and UDP, packs per sender with its address', async () => {
    const sink = collect();
    r = new SyslogReceiver(
      {
        listeners: [
          { name: 'tcp', transport: 'tcp', port: 0, host: '127.0.0.1' },
          { name: 'udp', transport: 'udp', port: 0, host: '127.0.0.1' },
        ],
        packing: { lingerMs: 20 },
        stopReadGraceMs: 10,
      },
      new FlowGate(1 << 20),
      sink,
    );
    await r.start();
    await send(r.ports.get('tcp')!, '<13>a\n5 <13>b<13>c\r\n');
    const u = dgram.createSocket('udp4');
    await new Promise<void>((res) => u.send('<13>d\n', r!.ports.get('udp')!, '127.0.0.1', () => res()));
    u.close();
    await until(() => sink.lines().length === 4);
    expect(sink.lines().sort()).toEqual(['<13>a', '<13>b', '<13>c', '<13>d']);
    expect(new Set(sink.got.map((m) => m.sender))).toEqual(new Set(['127.0.0.1']));
    expect(r.snapshot().tcp.lines).toBe(3);
    expect(r.snapshot().udp.lines).toBe(1);
  });

  it('pauses TCP while the gate is closed and drops UDP as queue_full', async () => {
    const sink = collect();
    const gate = new FlowGate(100, 10);
    r = new SyslogReceiver(
      {
        listeners: [
          { name: 'tcp', transport: 'tcp', port: 0, host: '127.0.0.1' },
          { name: 'udp', transport: 'udp', port: 0, host: '127.0.0.1' },
        ],
        packing: { lingerMs: 10 },
        stopReadGraceMs: 10,
      },
      gate,
      sink,
    );
    await r.start();
    gate.acquire(200); // Kafka behind
    const u = dgram.createSocket('udp4');
    await new Promise<void>((res) => u.send('<13>lost\n', r!.ports.get('udp')!, '127.0.0.1', () => res()));
    u.close();
    await send(r.ports.get('tcp')!, '<13>held\n');
    await until(() => r!.snapshot().udp.drops.queue_full === 1);
    await new Promise((res) => setTimeout(res, 100));
    expect(sink.lines()).toEqual([]); // TCP bytes wait in the kernel, not in our memory
    gate.release(200);
    await until(() => sink.lines().length === 1);
    expect(sink.lines()).toEqual(['<13>held']);
  });

  it('refuses sources outside allowedSourceCIDRs', async () => {
    const sink = collect();
    r = new SyslogReceiver(
      {
        listeners: [{ name: 'tcp', transport: 'tcp', port: 0, host: '127.0.0.1' }],
        packing: { lingerMs: 10 },
        allowedSourceCIDRs: ['10.0.0.0/8'],
        stopReadGraceMs: 10,
      },
      new FlowGate(1 << 20),
      sink,
    );
    await r.start();
    await send(r.ports.get('tcp')!, '<13>x\n').catch(() => undefined);
    await until(() => r!.snapshot().tcp.drops.source_denied === 1);
    expect(sink.got).toEqual([]);
  });

  it('stop() cuts open messages and the sink drains them', async () => {
    const sent: PackedMessage[][] = [];
    const gate = new FlowGate(1 << 20);
    const kafka = new KafkaSink(
      async (rec) => {
        sent.push(rec.messages as never);
      },
      gate,
      { topic: 't', compression: 3, partitions: () => 3, partitionBudgetBytes: 1 << 20 },
    );
    r = new SyslogReceiver(
      {
        listeners: [{ name: 'tcp', transport: 'tcp', port: 0, host: '127.0.0.1' }],
        packing: { lingerMs: 60_000 },
        stopReadGraceMs: 50,
      },
      gate,
      kafka,
    );
    await r.start();
    const s = net.connect(r.ports.get('tcp')!, '127.0.0.1');
    await new Promise((res) => s.once('connect', res));
    s.write('<13>one\n<13>unterminated');
    await until(() => r!.packer.openSenders === 1);
    await r.stop();
    r = undefined;
    expect(await kafka.drain(1_000)).toBe(true);
    const values = sent.flat().map((m) => (m as unknown as { value: Buffer }).value.toString());
    expect(values).toEqual(['<13>one\n<13>unterminated']);
    expect(gate.bytes).toBe(0);
    s.destroy();
  });
});

describe('helpers', () => {
  it('normalizes v4-mapped addresses and filters by CIDR', () => {
    expect(normalizeAddress('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(normalizeAddress('2001:db8::1')).toBe('2001:db8::1');
    const allow = sourceFilter(['10.0.0.0/8', '2001:db8::/32', '192.0.2.7']);
    expect([
      allow('10.9.9.9'),
      allow('11.0.0.1'),
      allow('2001:db8::5'),
      allow('192.0.2.7'),
      allow('192.0.2.8'),
    ]).toEqual([true, false, true, true, false]);
    expect(sourceFilter([])('1.2.3.4')).toBe(true);
  });
});
