/**
 * The syslog receiver's own view of the demo traffic, read from its metrics endpoint: lines
 * received from the network, Kafka messages packed, and what Kafka acknowledged (lines, messages,
 * bytes before and after the value codec). The live view shows the rates; the summary the totals
 * and the average rates over the receiver's active window. Parsing and rates are pure; `find…`
 * and `ReceiverWatch` do the I/O.
 */
import fs from 'node:fs';
import path from 'node:path';
import { RECEIVER_CONFIG_PATH } from '../../common/src/ingest-config';
import { formatBytes, formatInt } from './render';

/** The receiver's cumulative counters at one scrape. */
export interface ReceiverCounters {
  atMs: number;
  receivedLines: number;
  receivedBytes: number;
  packedMessages: number;
  producedLines: number;
  producedMessages: number;
  /** Packed (uncompressed) bytes of acknowledged messages. */
  producedBytes: number;
  /** The same messages as sent (after the value codec). */
  wireBytes: number;
  dropped: number;
}

const COUNTERS: Record<Exclude<keyof ReceiverCounters, 'atMs'>, string> = {
  receivedLines: 'logpipeline_ingest_lines_received_total',
  receivedBytes: 'logpipeline_ingest_bytes_received_total',
  packedMessages: 'logpipeline_ingest_messages_packed_total',
  producedLines: 'logpipeline_ingest_lines_produced_total',
  producedMessages: 'logpipeline_ingest_messages_produced_total',
  producedBytes: 'logpipeline_ingest_bytes_produced_total',
  wireBytes: 'logpipeline_ingest_wire_bytes_produced_total',
  dropped: 'logpipeline_ingest_dropped_total',
};

/** Sums each counter's samples over its labels in a Prometheus text exposition. */
export function parseReceiverCounters(text: string, atMs: number): ReceiverCounters {
  const out = { atMs } as ReceiverCounters;
  for (const key of Object.keys(COUNTERS) as Array<keyof typeof COUNTERS>) out[key] = 0;
  const byName = new Map(Object.entries(COUNTERS).map(([k, n]) => [n, k as keyof typeof COUNTERS]));
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const end = line.search(/[{ ]/);
    const key = end > 0 ? byName.get(line.slice(0, end)) : undefined;
    if (key) out[key] += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
  }
  return out;
}

/** Per-second rates between two scrapes (zeros when they are the same moment). */
export function receiverRates(a: ReceiverCounters, b: ReceiverCounters): ReceiverCounters {
  const s = (b.atMs - a.atMs) / 1000;
  const out = { atMs: b.atMs } as ReceiverCounters;
  for (const key of Object.keys(COUNTERS) as Array<keyof typeof COUNTERS>)
    out[key] = s > 0 ? Math.max(0, b[key] - a[key]) / s : 0;
  return out;
}

/** One line of the live view: what the receiver receives, packs and gets acknowledged per second. */
export function receiverRateLine(r: ReceiverCounters): string {
  return (
    `receiver   received ${formatInt(r.receivedLines)} lines/s · packed ${formatInt(r.packedMessages)} msgs/s · ` +
    `produced ${formatInt(r.producedLines)} lines/s in ${formatInt(r.producedMessages)} msgs/s, ` +
    `${formatBytes(r.producedBytes)}/s (${formatBytes(r.wireBytes)}/s compressed)`
  );
}

/** The receiver's part of the summary: totals, then average rates over its active window. */
export interface ReceiverSummary {
  totals: ReceiverCounters;
  /** Averages from the first scrape that saw traffic to the last one where production moved. */
  rates: ReceiverCounters;
  seconds: number;
}

/** Summary lines (the summary's column layout). */
export function receiverSummaryLines(s: ReceiverSummary): string[] {
  const t = s.totals;
  const r = s.rates;
  const perMsg = t.producedMessages > 0 ? Math.round(t.producedLines / t.producedMessages) : 0;
  const ratio = t.wireBytes > 0 ? (t.producedBytes / t.wireBytes).toFixed(1) : '-';
  return [
    `receiver       received ${formatInt(t.receivedLines)} lines (${formatBytes(t.receivedBytes)}), packed ${formatInt(t.packedMessages)} messages (${perMsg} lines each), dropped ${formatInt(t.dropped)}`,
    `               produced ${formatInt(t.producedLines)} lines in ${formatInt(t.producedMessages)} messages, ${formatBytes(t.producedBytes)} packed, ${formatBytes(t.wireBytes)} compressed (${ratio}x)`,
    `               over ${s.seconds.toFixed(1)}s: received ${formatInt(r.receivedLines)} lines/s, packed ${r.packedMessages.toFixed(1)} msgs/s, produced ${formatInt(r.producedLines)} lines/s, ${r.producedMessages.toFixed(1)} msgs/s, ${formatBytes(r.producedBytes)}/s (${formatBytes(r.wireBytes)}/s on the wire)`,
  ];
}

/**
 * Probe ports of the receivers the local pod runner started under `podsDir`: each pod's mounted
 * config (RECEIVER_CONFIG_PATH inside its directory) carries the port the runner gave it.
 */
export function findReceiverMetricsPorts(podsDir: string): number[] {
  if (!fs.existsSync(podsDir)) return [];
  const ports: Array<{ port: number; mtime: number }> = [];
  for (const pod of fs.readdirSync(podsDir)) {
    const file = path.join(podsDir, pod, RECEIVER_CONFIG_PATH);
    if (!fs.existsSync(file)) continue;
    try {
      const cfg = JSON.parse(fs.readFileSync(file, 'utf8')) as { httpPort?: number };
      if (cfg.httpPort) ports.push({ port: cfg.httpPort, mtime: fs.statSync(file).mtimeMs });
    } catch {
      // A config being rewritten right now: the next poll reads it.
    }
  }
  return ports.sort((a, b) => b.mtime - a.mtime).map((p) => p.port);
}

/**
 * The receiver publishes its counters once a second: live rates are taken over this window so
 * that a 2x/s refresh does not alternate between 0 and twice the rate.
 */
const LIVE_WINDOW_MS = 2_000;

/** Scrapes the receivers' metrics (summed over replicas); `latestRates()` and `summary()` for the view. */
export class ReceiverWatch {
  private first?: ReceiverCounters;
  private last?: ReceiverCounters;
  private lastMoved?: ReceiverCounters;
  private previous?: ReceiverCounters;
  private readonly recent: ReceiverCounters[] = [];

  constructor(private readonly podsDir: string) {}

  /** One scrape of every receiver; a failed scrape leaves the last numbers in place. */
  async poll(now = Date.now()): Promise<void> {
    const texts = await Promise.all(
      findReceiverMetricsPorts(this.podsDir).map((port) =>
        fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2_000) })
          .then((r) => (r.ok ? r.text() : ''))
          .catch(() => ''),
      ),
    );
    if (texts.every((t) => t === '')) return;
    const c = parseReceiverCounters(texts.join('\n'), now);
    this.previous = this.last;
    this.last = c;
    this.recent.push(c);
    while (this.recent.length > 2 && this.recent[1].atMs <= c.atMs - LIVE_WINDOW_MS) this.recent.shift();
    if (!this.first && c.receivedLines > 0) this.first = this.previous ?? c;
    if (!this.lastMoved || c.producedLines > this.lastMoved.producedLines) this.lastMoved = c;
  }

  /** Rates over the last LIVE_WINDOW_MS of scrapes, or undefined before two. */
  latestRates(): ReceiverCounters | undefined {
    return this.recent.length >= 2 && this.last ? receiverRates(this.recent[0], this.last) : undefined;
  }

  /** Totals and average rates, or undefined when no traffic was seen. */
  summary(): ReceiverSummary | undefined {
    if (!this.first || !this.last || !this.lastMoved) return undefined;
    return {
      totals: this.last,
      rates: receiverRates(this.first, this.lastMoved),
      seconds: (this.lastMoved.atMs - this.first.atMs) / 1000,
    };
  }
}
