/**
 * `logpipeline query --ip X --from T1 --to T2`: the legal query (all records where X is the source
 * or the destination, T1 <= ts <= T2), streamed to stdout as CSV (default), TSV or JSON lines.
 * The address and times are bound parameters, never concatenated. A one-line summary (rows read,
 * elapsed) goes to stderr so stdout stays the evidence file. Exit 0 on success, 2 on usage or
 * connection errors.
 */
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  connect,
  CONNECTION_OPTIONS,
  parseArgs,
  parseTime,
  required,
  UsageError,
  type ParsedArgs,
} from '../compliance/cli-options';
import { LEGAL_QUERY_FORMATS, legalQueryParams, runLegalQuery } from '../compliance/legal-query';

const USAGE = `usage: logpipeline query --ip IP --from T1 --to T2 --database DB --table T [options]

  --clickhouse-url URL --user U --password P   connection (or CLICKHOUSE_URL, CLICKHOUSE_USER, CLICKHOUSE_PASSWORD)
  --ip IP                    IPv4 or IPv6 address, matched as source or destination
  --from, --to TIME          closed window on the time column (ISO 8601 or epoch)
  --format csv|tsv|json      output format (default csv, with a header line)
  --limit N                  at most N rows
  --time-column, --src-column, --dst-column   defaults ts, src_ip, dst_ip
`;

const VALUES = [
  ...CONNECTION_OPTIONS,
  'ip',
  'from',
  'to',
  'database',
  'table',
  'format',
  'limit',
  'time-column',
  'src-column',
  'dst-column',
];

/** Runs `query` with argv (after the command name); rows go to `out`, the summary to `err`. */
export async function runQuery(
  argv: string[],
  out: Writable,
  env: NodeJS.ProcessEnv = process.env,
  err: Writable = process.stderr,
): Promise<number> {
  let args: ParsedArgs;
  let params: ReturnType<typeof legalQueryParams>;
  let format: keyof typeof LEGAL_QUERY_FORMATS;
  let limit: number;
  try {
    args = parseArgs(argv, VALUES, ['help']);
    if (args.flags.has('help')) {
      out.write(USAGE);
      return 0;
    }
    params = legalQueryParams(
      required(args, 'ip'),
      parseTime(required(args, 'from'), '--from'),
      parseTime(required(args, 'to'), '--to'),
    );
    format = (args.values.get('format') ?? 'csv') as keyof typeof LEGAL_QUERY_FORMATS;
    if (!(format in LEGAL_QUERY_FORMATS)) throw new UsageError('--format must be csv, tsv or json');
    limit = Number(args.values.get('limit') ?? 0);
    if (!Number.isSafeInteger(limit) || limit < 0)
      throw new UsageError('--limit must be a non-negative integer');
    required(args, 'database');
    required(args, 'table');
  } catch (e) {
    err.write(`query: ${(e as Error).message}\n${e instanceof UsageError ? USAGE : ''}`);
    return 2;
  }
  const client = connect(args, env);
  const started = Date.now();
  try {
    const target = {
      database: required(args, 'database'),
      table: required(args, 'table'),
      timeColumn: args.values.get('time-column'),
      srcColumn: args.values.get('src-column'),
      dstColumn: args.values.get('dst-column'),
    };
    const result = await runLegalQuery(client, target, params, format, 'union', limit);
    await pipeline(result.stream, out, { end: false });
    const read = result.summary ? `, ${result.summary.readRows} rows read` : '';
    err.write(
      `query: ${params.ip} ${new Date(params.from).toISOString()} .. ${new Date(params.to).toISOString()}: ${Date.now() - started} ms${read}\n`,
    );
    return 0;
  } catch (e) {
    err.write(`query: ${(e as Error).message}\n`);
    return 2;
  } finally {
    await client.close();
  }
}
