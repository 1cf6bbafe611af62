import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RECEIVER_CONFIG_PATH } from '../../common/src/ingest-config';
import {
  findReceiverMetricsPorts,
  parseReceiverCounters,
  receiverRateLine,
  receiverRates,
  receiverSummaryLines,
} from './receiver-rates';

const scrape = (received: number, produced: number, messages: number) => `
# HELP logpipeline_ingest_lines_received_total Lines framed from the network.
logpipeline_ingest_lines_received_total{listener="tcp"} ${received - 10}
logpipeline_ingest_lines_received_total{listener="udp"} 10
logpipeline_ingest_bytes_received_total{listener="tcp"} ${received * 700}
logpipeline_ingest_messages_packed_total{cause="lines"} ${messages}
logpipeline_ingest_lines_produced_total ${produced}
logpipeline_ingest_messages_produced_total ${messages}
logpipeline_ingest_bytes_produced_total ${produced * 700}
logpipeline_ingest_wire_bytes_produced_total ${produced * 80}
logpipeline_ingest_dropped_total{listener="udp",reason="oversize"} 2
logpipeline_ingest_lines_received_total_extra 99
`;

describe('receiver rates', () => {
  it('sums counters over labels and ignores other series', () => {
    const c = parseReceiverCounters(scrape(2048, 1024, 1), 5);
    expect(c).toEqual({
      atMs: 5,
      receivedLines: 2048,
      receivedBytes: 2048 * 700,
      packedMessages: 1,
      producedLines: 1024,
      producedMessages: 1,
      producedBytes: 1024 * 700,
      wireBytes: 1024 * 80,
      dropped: 2,
    });
  });

  it('turns two scrapes into per-second rates and says them in one line', () => {
    const a = parseReceiverCounters(scrape(1000, 0, 0), 1_000);
    const b = parseReceiverCounters(scrape(21_000, 20_480, 20), 3_000);
    const r = receiverRates(a, b);
    expect(r.receivedLines).toBe(10_000);
    expect(r.producedMessages).toBe(10);
    expect(receiverRateLine(r)).toMatch(
      /received 10,000 lines\/s .*packed 10 msgs\/s .*produced 10,240 lines\/s/,
    );
  });

  it('summarises totals and average rates', () => {
    const a = parseReceiverCounters(scrape(0, 0, 0), 0);
    const b = parseReceiverCounters(scrape(20_480, 20_480, 20), 2_000);
    const lines = receiverSummaryLines({ totals: b, rates: receiverRates(a, b), seconds: 2 });
    expect(lines.join('\n')).toMatch(/packed 20 messages \(1024 lines each\)/);
    expect(lines.join('\n')).toMatch(/\(8\.8x\)/);
    expect(lines.join('\n')).toMatch(/produced 10,240 lines\/s, 10\.0 msgs\/s/);
  });

  it("finds each pod's probe port in its mounted receiver config, newest first", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-ports-'));
    try {
      for (const [pod, port] of [
        ['ns-a-1', 4001],
        ['ns-b-2', 4002],
      ] as const) {
        const file = path.join(dir, pod, RECEIVER_CONFIG_PATH);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, JSON.stringify({ httpPort: port }));
        fs.utimesSync(file, port, port);
      }
      fs.mkdirSync(path.join(dir, 'worker-pod'));
      expect(findReceiverMetricsPorts(dir)).toEqual([4002, 4001]);
      expect(findReceiverMetricsPorts(path.join(dir, 'absent'))).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ReceiverWatch', () => {
  it('takes live rates over a 2 s window (the receiver publishes once a second) and sums replicas', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-watch-'));
    const file = path.join(dir, 'pod-1', RECEIVER_CONFIG_PATH);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    let text = scrape(0, 0, 0);
    const http = await import('node:http');
    const server = http.createServer((_req, res) => res.end(text));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    fs.writeFileSync(file, JSON.stringify({ httpPort: (server.address() as { port: number }).port }));
    try {
      const { ReceiverWatch } = await import('./receiver-rates');
      const w = new ReceiverWatch(dir);
      await w.poll(0);
      expect(w.latestRates()).toBeUndefined();
      expect(w.summary()).toBeUndefined();
      text = scrape(10_000, 10_240, 10);
      await w.poll(1_000);
      await w.poll(1_500); // same published counters: the window still spans the change
      expect(w.latestRates()!.receivedLines).toBeCloseTo(10_000 / 1.5);
      text = scrape(20_000, 20_480, 20);
      await w.poll(3_000);
      expect(w.latestRates()!.receivedLines).toBe(5_000); // from t=1000 (the oldest within 2 s)
      await w.poll(4_000); // nothing moved
      const s = w.summary()!;
      expect(s.totals.producedLines).toBe(20_480);
      expect(s.seconds).toBe(3); // first scrape before traffic (0) to the last that moved (3000)
      expect(s.rates.producedMessages).toBeCloseTo(20 / 3);
    } finally {
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
