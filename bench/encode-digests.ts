/**
 * Output digests of the encoder, for proving a speed change byte-identical: sha256 of the bodies
 * (RowBinary and TabSeparated), row indexes and dead letters over corpus × parser format ×
 * malformed share × lines per message × column plan (reference; with `field:` columns; every type
 * with static values and sender headers; standard sources in other types). Run it on the old and
 * the new build and diff the two outputs:
 * `scripts/with-node node dist/bench/encode-digests.js > new.txt` (and the same in the old tree).
 */
import crypto from 'node:crypto';
import { BatchEncoder, MessageInput } from '../consumer/src/encode/batch';
import type { ColumnInput } from '../consumer/src/encode/column-plan';
import { REFERENCE_COLUMNS } from '../consumer/src/encode/reference-columns';
import type { FormatName } from '../consumer/src/parse/record';
import { COLUMNS, EDGE_LINES, STATIC } from '../test/fixtures/rowbinary-columns';
import { generateSampleLines } from '../test/fixtures/samples';

/** Standard sources in types the reference plan does not use (sender header included). */
const OTHER_TYPES: ColumnInput[] = [
  { name: 's4', type: 'IPv4', source: 'sender_ip' },
  { name: 's6', type: 'Nullable(IPv6)', source: 'sender_ip' },
  { name: 'st', type: 'String', source: 'sender_ip' },
  { name: 'sn', type: 'Nullable(String)', source: 'sender_ip' },
  { name: 'act_s', type: 'String', source: 'action' },
  { name: 'act_i', type: 'Int16', source: 'action' },
  {
    name: 'sev_e',
    type: "Enum8('emergency'=0,'alert'=1,'critical'=2,'error'=3,'warning'=4,'notice'=5,'informational'=6,'debug'=7)",
    source: 'severity',
  },
  { name: 'ven_e', type: "Enum8('fortigate'=1,'paloalto'=2)", source: 'vendor' },
  { name: 'dev_n', type: 'Nullable(String)', source: 'device' },
  { name: 'bytes_s', type: 'String', source: 'bytes' },
  { name: 'part8', type: 'UInt8', source: 'kafka_partition' },
  { name: 'ingest_s', type: 'DateTime', source: 'ingest_time' },
  { name: 'ts9', type: 'DateTime64(9)', source: 'timestamp' },
  { name: 'raw_n', type: 'Nullable(String)', source: 'raw' },
  { name: 'topic_s', type: 'String', source: 'kafka_topic' },
  { name: 'natdp_s', type: 'Nullable(UInt8)', source: 'nat_dst_port' },
  { name: 'proto_s', type: 'Nullable(String)', source: 'proto' },
];
/** Columns that refuse many values (dead-letter paths). */
const STRICT: ColumnInput[] = [
  { name: 'rule_i', type: 'Nullable(UInt32)', source: 'rule' },
  { name: 'src4', type: 'IPv4', source: 'src_ip' },
  { name: 'off32', type: 'Int32', source: 'kafka_offset' },
  { name: 'dst4', type: 'Nullable(IPv4)', source: 'dst_ip' },
];
const PLANS: Record<string, readonly ColumnInput[]> = {
  ref: REFERENCE_COLUMNS,
  fields: [
    ...REFERENCE_COLUMNS,
    { name: 'f1', type: 'String', source: 'field:srcintf' },
    { name: 'f2', type: 'Nullable(String)', source: 'field:app' },
  ],
  wide: [...COLUMNS, ...OTHER_TYPES, ...STRICT],
  typed: [...REFERENCE_COLUMNS, ...OTHER_TYPES],
};
const SENDERS = [undefined, '192.0.2.9', '2001:db8::5', 'not-an-ip', ''];
const INGEST = 1705320000789;

function messagesOf(lines: Buffer[], perMessage: number): MessageInput[] {
  const out: MessageInput[] = [];
  for (let i = 0; i < lines.length; i += perMessage) {
    const group = lines.slice(i, i + perMessage);
    const value =
      perMessage === 1 ? Buffer.from(group[0]) : Buffer.concat(group.flatMap((l) => [l, Buffer.of(10)]));
    const sender = SENDERS[(i / perMessage) % SENDERS.length];
    out.push({
      value,
      topic: 't',
      partition: 3,
      offset: i * 1_000_003,
      sender: sender === undefined ? undefined : Buffer.from(sender),
    });
  }
  return out;
}

/** Digests of one encoder configuration over `lines`. */
function digest(
  lines: Buffer[],
  perMessage: number,
  format: string,
  plan: string,
  insert: 'RowBinary' | 'TabSeparated',
) {
  const messages = messagesOf(lines, perMessage);
  const enc = new BatchEncoder({
    parser: { format, timezone: 'Europe/Istanbul' },
    columns: PLANS[plan],
    format: insert,
    staticFields: plan === 'wide' ? STATIC : undefined,
  });
  const body = crypto.createHash('sha256');
  const dead = crypto.createHash('sha256');
  let rows = 0;
  let deadLetters = 0;
  for (let from = 0; from < messages.length; from += 1000) {
    const r = enc.encode(messages, INGEST, from, Math.min(messages.length, from + 1000));
    body.update(r.data);
    if (r.rowStarts)
      body.update(Buffer.from(r.rowStarts.buffer, r.rowStarts.byteOffset, r.rowStarts.byteLength));
    rows += r.rows;
    deadLetters += r.deadLetters.length;
    for (const d of r.deadLetters)
      dead.update(`${d.reason}|${d.messageIndex}|${d.lineIndex}|${d.line.toString('base64')}\n`);
  }
  return { rows, deadLetters, body: body.digest('hex').slice(0, 16), dead: dead.digest('hex').slice(0, 16) };
}

if (require.main === module) {
  const out: Record<string, unknown> = {};
  const inserts = ['RowBinary', 'TabSeparated'] as const;
  for (const sample of ['fortigate', 'paloalto', 'json', 'mix'])
    for (const format of sample === 'mix' ? ['auto', 'fortigate', 'paloalto'] : [sample, 'auto'])
      for (const malformed of [0, 0.2]) {
        const lines = generateSampleLines(sample as FormatName | 'mix', 6000, {
          seed: 7,
          malformedRatio: malformed,
        });
        for (const per of [1, 7])
          for (const insert of inserts)
            for (const plan of Object.keys(PLANS))
              out[[sample, format, malformed, per, insert, plan].join('/')] = digest(
                lines,
                per,
                format,
                plan,
                insert,
              );
      }
  const edge = [
    ...EDGE_LINES.map((l) => Buffer.from(l)),
    ...generateSampleLines('mix', 3000, { seed: 11, malformedRatio: 0.05 }),
  ];
  for (const insert of inserts)
    for (const per of [1, 2]) out[`edge/${per}/${insert}`] = digest(edge, per, 'auto', 'wide', insert);
  console.log(`${Object.keys(out).length} combinations`);
  for (const [k, v] of Object.entries(out)) console.log(k, JSON.stringify(v));
}
