import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { describeRecord, runLegalQuery } from './legal-query';

const rows = [
  {
    ts: '2026-12-02 10:00:01.000',
    src_ip: '::ffff:192.168.1.5',
    src_port: 51000,
    dst_ip: '2001:db8::1',
    dst_port: 443,
    proto: 'tcp',
    action: 'accept',
    vendor: 'fortigate',
    device: 'FG1',
  },
  {
    ts: '2026-12-02 10:00:02.000',
    src_ip: '::ffff:10.0.0.1',
    src_port: 1,
    dst_ip: '::ffff:192.168.1.5',
    dst_port: 53,
    proto: 'udp',
    action: 'deny',
    vendor: 'cisco-asa',
    device: 'asa',
  },
  {
    ts: '2026-12-02 10:00:03.000',
    src_ip: '::ffff:192.168.1.5',
    src_port: 2,
    dst_ip: '::ffff:8.8.8.8',
    dst_port: 53,
    proto: 'udp',
    action: 'accept',
    vendor: 'iptables',
    device: 'gw',
  },
  {
    ts: '2026-12-02 10:00:04.000',
    src_ip: '::ffff:192.168.1.5',
    src_port: 3,
    dst_ip: '::ffff:8.8.4.4',
    dst_port: 53,
    proto: 'udp',
    action: 'accept',
    vendor: 'json',
    device: 'x',
  },
];

/** A stand-in for the HTTP response body only: the query text and parameters are what is checked. */
function recordingClient(body: string): {
  client: ClickHouseClient;
  calls: Array<{ query: string; query_params: unknown }>;
} {
  const calls: Array<{ query: string; query_params: unknown }> = [];
  const client = {
    exec: async (req: { query: string; query_params: unknown }) => {
      calls.push(req);
      // Split mid-record, as a network stream would.
      const cut = Math.floor(body.length / 2);
      return {
        stream: Readable.from([Buffer.from(body.slice(0, cut)), Buffer.from(body.slice(cut))]),
        response_headers: {},
      };
    },
  } as unknown as ClickHouseClient;
  return { client, calls };
}

describe('demo legal query', () => {
  it("asks the project's legal query with bound parameters and counts the streamed records", async () => {
    const { client, calls } = recordingClient(rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const result = await runLegalQuery(client, {
      database: 'logs',
      table: 'firewall',
      timeColumn: 'ts',
      ip: '192.168.1.5',
      fromMs: 1_000,
      toMs: 2_000,
      limit: 50,
    });
    expect(calls).toHaveLength(1);
    expect(calls[0].query_params).toEqual({ ip: '192.168.1.5', from: 1_000, to: 2_000 });
    expect(calls[0].query).toContain('{ip:IPv6}');
    expect(calls[0].query).not.toContain('192.168.1.5');
    expect(calls[0].query).toMatch(/FROM `logs`\.`firewall`.* LIMIT 50 FORMAT JSONEachRow$/);
    expect(result.rows).toBe(4);
    expect(result.sample).toHaveLength(3);
    expect(result.sample[1]).toBe(
      '2026-12-02 10:00:02.000  10.0.0.1:1 -> 192.168.1.5:53  udp deny  cisco-asa/asa',
    );
    expect(result.from).toBe('1970-01-01T00:00:01.000Z');
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('refuses an address that is not one before asking anything', async () => {
    const { client, calls } = recordingClient('');
    await expect(
      runLegalQuery(client, {
        database: 'logs',
        table: 'firewall',
        timeColumn: 'ts',
        ip: "1.2.3.4' OR 1=1",
        fromMs: 1,
        toMs: 2,
        limit: 1,
      }),
    ).rejects.toThrow(/not an IPv4 or IPv6/);
    expect(calls).toHaveLength(0);
  });

  it('describes a record on one line, IPv4-mapped addresses shown as IPv4', () => {
    expect(describeRecord(rows[0], 'ts')).toBe(
      '2026-12-02 10:00:01.000  192.168.1.5:51000 -> 2001:db8::1:443  tcp accept  fortigate/FG1',
    );
  });
});
