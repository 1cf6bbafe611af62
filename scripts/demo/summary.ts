/**
 * The demo's closing summary, pure: the run's facts in, human lines and one machine-readable JSON
 * object out (the integration test and scripts read the JSON line).
 */
import type { LegalQueryResult } from './legal-query';
import { receiverSummaryLines, type ReceiverSummary } from './receiver-rates';
import { formatBytes, formatInt } from './render';

/** What the run measured. */
export interface SummaryFacts {
  pipeline: string;
  targetRate: number;
  linesPerMessage: number;
  producedLines: number;
  producedMessages: number;
  producedBytes: number;
  /** Lines the generator mutated (most, not all, are unparseable). */
  malformedLines: number;
  failedSends: number;
  insertedRows: number;
  deadLetters: number;
  /** First send to last acknowledgement. */
  productionMs: number;
  /** First send until every produced line was stored or dead-lettered (undefined: never). */
  endToEndMs?: number;
  /** End of production until every line was accounted for (undefined: drain timed out or skipped). */
  drainMs?: number;
  maxReplicas: number;
  interrupted: boolean;
  legalQuery?: LegalQueryResult;
  legalQueryError?: string;
  /** Unmutated lines the generator wrote the queried IP into (anywhere in the line). */
  queryIpMentions?: number;
  /** Of those, the lines that parse into a record with it as source or destination: what the query must return. */
  queryIpRecords?: number;
  /** The syslog receiver's counters and rates (traffic sent through it). */
  receiver?: ReceiverSummary;
}

/** The JSON line's shape. */
export interface SummaryJson {
  demoSummary: true;
  pipeline: string;
  produced: number;
  producedMessages: number;
  producedBytes: number;
  malformed: number;
  failedSends: number;
  inserted: number;
  deadLettered: number;
  /** inserted + deadLettered == produced. */
  complete: boolean;
  productionSeconds: number;
  producedPerSecond: number;
  endToEndSeconds: number | null;
  drainSeconds: number | null;
  throughputPerSecond: number | null;
  maxReplicas: number;
  interrupted: boolean;
  /** The syslog receiver's totals and average per-second rates (null with --direct). */
  receiver: { totals: Record<string, number>; perSecond: Record<string, number>; seconds: number } | null;
  legalQuery:
    | {
        ip: string;
        from: string;
        to: string;
        rows: number;
        latencyMs: number;
        mentions: number | null;
        expected: number | null;
      }
    | { error: string }
    | null;
}

/** Counters without their timestamp (rates rounded to 0.1). */
function withoutTime(c: object, round = false): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(c)) if (k !== 'atMs') out[k] = round ? Math.round(v * 10) / 10 : v;
  return out;
}

const seconds = (ms: number | undefined) => (ms === undefined ? null : Math.round(ms) / 1000);

/** The machine-readable summary. */
export function summaryJson(f: SummaryFacts): SummaryJson {
  const lq = f.legalQuery;
  return {
    demoSummary: true,
    pipeline: f.pipeline,
    produced: f.producedLines,
    producedMessages: f.producedMessages,
    producedBytes: f.producedBytes,
    malformed: f.malformedLines,
    failedSends: f.failedSends,
    inserted: f.insertedRows,
    deadLettered: f.deadLetters,
    complete: f.insertedRows + f.deadLetters === f.producedLines,
    productionSeconds: seconds(f.productionMs)!,
    producedPerSecond: f.productionMs > 0 ? Math.round(f.producedLines / (f.productionMs / 1000)) : 0,
    endToEndSeconds: seconds(f.endToEndMs),
    drainSeconds: seconds(f.drainMs),
    // Lines through the whole pipeline (Kafka, parse, ClickHouse) per second, first send to last store.
    throughputPerSecond: f.endToEndMs
      ? Math.round((f.insertedRows + f.deadLetters) / (f.endToEndMs / 1000))
      : null,
    maxReplicas: f.maxReplicas,
    interrupted: f.interrupted,
    receiver: f.receiver
      ? {
          totals: withoutTime(f.receiver.totals),
          perSecond: withoutTime(f.receiver.rates, true),
          seconds: Math.round(f.receiver.seconds * 10) / 10,
        }
      : null,
    legalQuery: lq
      ? {
          ip: lq.ip,
          from: lq.from,
          to: lq.to,
          rows: lq.rows,
          latencyMs: Math.round(lq.latencyMs * 10) / 10,
          mentions: f.queryIpMentions ?? null,
          expected: f.queryIpRecords ?? null,
        }
      : f.legalQueryError
        ? { error: f.legalQueryError }
        : null,
  };
}

/** What the generator says the query must return, and how many more lines only mention the IP. */
function expectedRecords(rows: number, f: SummaryFacts): string {
  if (f.queryIpRecords === undefined) return '';
  const verdict =
    rows === f.queryIpRecords ? 'as expected' : `MISMATCH: expected ${formatInt(f.queryIpRecords)}`;
  const others = (f.queryIpMentions ?? f.queryIpRecords) - f.queryIpRecords;
  const more =
    others > 0
      ? `; ${formatInt(others)} more ${others === 1 ? 'line mentions' : 'lines mention'} it in other fields`
      : '';
  return ` (${verdict}: the well-formed lines sent with it as source or destination${more})`;
}

function legalLines(f: SummaryFacts): string[] {
  const lq = f.legalQuery;
  if (!lq) return [`legal query    failed: ${f.legalQueryError ?? 'not run'}`];
  return [
    `legal query    all records of ${lq.ip} between ${lq.from} and ${lq.to}`,
    `               ${formatInt(lq.rows)} record${lq.rows === 1 ? '' : 's'} in ${lq.latencyMs.toFixed(1)} ms` +
      expectedRecords(lq.rows, f),
    ...lq.sample.map((s) => `                 ${s}`),
  ];
}

/** The human summary, one string per line. */
export function summaryLines(f: SummaryFacts): string[] {
  const j = summaryJson(f);
  const accounted = f.insertedRows + f.deadLetters;
  const verdict = j.complete
    ? 'every produced line is stored or dead-lettered (none lost, none duplicated)'
    : `MISMATCH: ${formatInt(accounted)} stored + dead-lettered vs ${formatInt(f.producedLines)} produced (${formatInt(accounted - f.producedLines)})`;
  const pct = (n: number) => (f.producedLines > 0 ? ((n / f.producedLines) * 100).toFixed(2) : '0.00');
  return [
    `summary of ${f.pipeline}${f.interrupted ? ' (interrupted)' : ''}`,
    `produced       ${formatInt(f.producedLines)} lines in ${formatInt(f.producedMessages)} messages of ${f.linesPerMessage} lines, ${formatBytes(f.producedBytes)} before LZ4`,
    `               ${formatInt(j.producedPerSecond)} lines/s over ${j.productionSeconds}s (target ${formatInt(f.targetRate)}/s); ${formatInt(f.malformedLines)} deliberately malformed${f.failedSends ? `; ${f.failedSends} sends failed` : ''}`,
    `inserted       ${formatInt(f.insertedRows)} rows (${pct(f.insertedRows)}%)`,
    `dead-lettered  ${formatInt(f.deadLetters)} lines (${pct(f.deadLetters)}%)`,
    `accounting     ${verdict}`,
    ...(!j.complete && accounted < f.producedLines && j.endToEndSeconds !== null
      ? [
          '               the group committed every message (commits follow stores), so the shortfall was dropped',
          "               after the insert, e.g. by the table's TTL: a line stamped before the retention window expires at once",
        ]
      : []),
    j.endToEndSeconds === null
      ? `end-to-end     not everything was stored within the drain timeout`
      : `end-to-end     ${j.endToEndSeconds}s from first send to last row (drain after production: ${j.drainSeconds}s), ${formatInt(j.throughputPerSecond ?? 0)} lines/s through the pipeline`,
    ...(f.receiver ? receiverSummaryLines(f.receiver) : []),
    `workers        up to ${f.maxReplicas} replicas`,
    ...legalLines(f),
  ];
}
