/**
 * `logpipeline verify`: proves a table's rows are what the pipeline inserted. Re-reads the rows of
 * a window from ClickHouse (streamed, bounded memory), recomputes every batch digest, checks the
 * hash chain and the signed, timestamped checkpoints, and reports which batch ranges were
 * modified, deleted, extended or expired. Exit 0 when clean, 1 on any finding, 2 on usage or
 * connection errors.
 */
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import type { Writable } from 'node:stream';
import { loadVerifyKey } from '../../common/src/integrity/checkpoint';
import { parseDuration } from '../src/api/duration';
import {
  connect,
  CONNECTION_OPTIONS,
  parseArgs,
  parseTime,
  required,
  UsageError,
  type ParsedArgs,
} from '../src/compliance/cli-options';
import { verifyTable, type VerifyOptions } from '../src/compliance/verify';
import { formatReport } from '../src/compliance/verify-report';

const USAGE = `usage: logpipeline verify --database DB --table T [--from T1 --to T2 | --all] [options]

  --clickhouse-url URL --user U --password P   connection (or CLICKHOUSE_URL, CLICKHOUSE_USER, CLICKHOUSE_PASSWORD)
  --from, --to TIME          window on the table's time column (ISO 8601 or epoch); --all for everything
  --public-key FILE          Ed25519 public key (PEM) that must have signed the checkpoints (required)
  --no-signature-check       verify without --public-key: rows and links only, signatures unchecked
  --tsa-ca FILE              trusted CA certificate(s) (PEM) for the checkpoints' RFC 3161 tokens
  --require-timestamps       a checkpoint without a token is a finding (default: a notice)
  --pipeline NS/NAME         the pipeline, when several write the table
  --retention DURATION       retention horizon (default: the longest retention the checkpoints signed,
                             or the table's TTL delete rule when longer), e.g. 730d
  --expiry-slack DURATION    a chain whose oldest link is younger than horizon + slack lost history
                             younger than the horizon (default 1d)
  --integrity-table NAME     default <table>_integrity (<base>_integrity for a <base>_dlq table)
  --checkpoint-table NAME    default <table>_checkpoints (<base>_checkpoints for a <base>_dlq table)
  --columns a,b,c            canonical column list (default: the signed checkpoint's, else the table's)
  --time-column NAME         default: the checkpoint's, else ts
  --output text|json
  --seal DIR|MANIFEST        verify an exported daily seal offline instead (with --public-key, --tsa-ca)
  --no-signature-check       with --seal: accept a seal without checking its signature
`;

const VALUES = [
  ...CONNECTION_OPTIONS,
  'database',
  'table',
  'from',
  'to',
  'public-key',
  'tsa-ca',
  'pipeline',
  'retention',
  'expiry-slack',
  'integrity-table',
  'checkpoint-table',
  'columns',
  'time-column',
  'output',
  'seal',
];
const FLAGS = ['all', 'require-timestamps', 'help', 'no-signature-check'];

function readCAs(file: string): X509Certificate[] {
  const pem = fs.readFileSync(file, 'utf8');
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new UsageError(`--tsa-ca ${file} holds no PEM certificate`);
  return blocks.map((b) => new X509Certificate(b));
}

/** Turns parsed options into VerifyOptions (throws UsageError). */
export function verifyOptions(args: ParsedArgs): VerifyOptions {
  const all = args.flags.has('all');
  const from = args.values.get('from');
  const to = args.values.get('to');
  if (all && (from || to)) throw new UsageError('--all excludes --from/--to');
  if (!all && !from && !to) throw new UsageError('give --from/--to or --all');
  const retention = args.values.get('retention');
  const retentionMs = retention === undefined ? undefined : parseDuration(retention);
  if (retention !== undefined && retentionMs === undefined)
    throw new UsageError(`--retention ${retention} is not a duration`);
  const slack = args.values.get('expiry-slack');
  const slackMs = slack === undefined ? undefined : parseDuration(slack);
  if (slack !== undefined && slackMs === undefined)
    throw new UsageError(`--expiry-slack ${slack} is not a duration`);
  const key = args.values.get('public-key');
  const unsigned = args.flags.has('no-signature-check');
  // Without the key anyone with write access can forge checkpoints: never a silent default.
  if (!key && !unsigned)
    throw new UsageError(
      'no --public-key: checkpoint signatures cannot be checked (pass --no-signature-check to verify rows and links only)',
    );
  if (key && unsigned) throw new UsageError('--public-key excludes --no-signature-check');
  const ca = args.values.get('tsa-ca');
  return {
    database: required(args, 'database'),
    table: required(args, 'table'),
    pipeline: args.values.get('pipeline'),
    window: {
      fromMs: from ? parseTime(from, '--from') : undefined,
      toMs: to ? parseTime(to, '--to') : undefined,
    },
    publicKey: key ? loadVerifyKey(fs.readFileSync(key, 'utf8')) : undefined,
    tsaCAs: ca ? readCAs(ca) : undefined,
    requireTimestamps: args.flags.has('require-timestamps'),
    retentionMs,
    expirySlackMs: slackMs,
    integrityTable: args.values.get('integrity-table'),
    checkpointTable: args.values.get('checkpoint-table'),
    columns: args.values
      .get('columns')
      ?.split(',')
      .map((c) => c.trim()),
    timeColumn: args.values.get('time-column'),
  };
}

/** Runs `verify` with argv (after the command name), writing the report to `out`; resolves the exit code. */
export async function runVerify(
  argv: string[],
  out: Writable,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let args: ParsedArgs;
  let opts: VerifyOptions;
  try {
    args = parseArgs(argv, VALUES, FLAGS);
    if (args.flags.has('help')) {
      out.write(USAGE);
      return 0;
    }
    if (args.values.has('seal')) return await (await import('./seal')).runSealVerify(args, out);
    opts = verifyOptions(args);
    const format = args.values.get('output') ?? 'text';
    if (format !== 'text' && format !== 'json') throw new UsageError('--output must be text or json');
  } catch (err) {
    out.write(`verify: ${(err as Error).message}\n${err instanceof UsageError ? USAGE : ''}`);
    return 2;
  }
  const client = connect(args, env);
  try {
    const report = await verifyTable(client, opts);
    out.write(
      args.values.get('output') === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatReport(report),
    );
    return report.ok ? 0 : 1;
  } catch (err) {
    out.write(`verify: ${(err as Error).message}\n`);
    return 2;
  } finally {
    await client.close();
  }
}
