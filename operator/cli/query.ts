/**
 * `logpipeline query --ip X --from T1 --to T2`: the legal query (all records where X is the source
 * or the destination, T1 <= ts <= T2), or with `--nat-ip P --nat-port Q` the CGNAT question (who
 * used public address P, port Q), streamed to stdout as CSV (default), TSV or JSON lines.
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
} from '../src/compliance/cli-options';
import {
  LEGAL_QUERY_FORMATS,
  legalQueryParams,
  natQueryParams,
  runLegalQuery,
  runNatQuery,
} from '../src/compliance/legal-query';

const USAGE = `usage: logpipeline query (--ip IP | --nat-ip P [--nat-port Q]) --from T1 --to T2 --database DB --table T [options]

  --clickhouse-url URL --user U --password P   connection (or CLICKHOUSE_URL, CLICKHOUSE_USER, CLICKHOUSE_PASSWORD)
  --ip IP                    IPv4 or IPv6 address, matched as source or destination
  --nat-ip P, --nat-port Q   who used public (translated source) address P, port Q: NAT / CGNAT sessions
  --from, --to TIME          closed window on the time column (ISO 8601 or epoch)
  --format csv|tsv|json      output format (default csv, with a header line)
  --limit N                  at most N rows
  --time-column, --src-column, --dst-column   defaults ts, src_ip, dst_ip
  --nat-ip-column, --nat-port-column           defaults nat_src_ip, nat_src_port
`;

const VALUES = [
  ...CONNECTION_OPTIONS,
  'ip',
  'nat-ip',
  'nat-port',
  'from',
  'to',
  'database',
  'table',
  'format',
  'limit',
  'time-column',
  'src-column',
  'dst-column',
  'nat-ip-column',
  'nat-port-column',
];

/** Runs `query` with argv (after the command name); rows go to `out`, the summary to `err`. */
export async function runQuery(
  argv: string[],
  out: Writable,
  env: NodeJS.ProcessEnv = process.env,
  err: Writable = process.stderr,
): Promise<number> {
  let args: ParsedArgs;
  let params: ReturnType<typeof legalQueryParams> | null = null;
  let nat: ReturnType<typeof natQueryParams> | null = null;
  let format: keyof typeof LEGAL_QUERY_FORMATS;
  let limit: number;
  try {
    args = parseArgs(argv, VALUES, ['help']);
    if (args.flags.has('help')) {
      out.write(USAGE);
      return 0;
    }
    const from = parseTime(required(args, 'from'), '--from');
    const to = parseTime(required(args, 'to'), '--to');
    const natIp = args.values.get('nat-ip');
    if (natIp !== undefined && args.values.has('ip')) throw new UsageError('give either --ip or --nat-ip');
    if (natIp === undefined && args.values.has('nat-port')) throw new UsageError('--nat-port needs --nat-ip');
    if (natIp !== undefined) {
      const port = args.values.get('nat-port');
      nat = natQueryParams(natIp, port === undefined ? undefined : Number(port), from, to);
    } else {
      params = legalQueryParams(required(args, 'ip'), from, to);
    }
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
      natIpColumn: args.values.get('nat-ip-column'),
      natPortColumn: args.values.get('nat-port-column'),
    };
    const result = nat
      ? await runNatQuery(client, target, nat, format, limit)
      : await runLegalQuery(client, target, params as NonNullable<typeof params>, format, 'union', limit);
    await pipeline(result.stream, out, { end: false });
    const read = result.summary ? `, ${result.summary.readRows} rows read` : '';
    const what = nat
      ? `NAT ${nat.nat_ip}${nat.nat_port !== undefined ? `:${nat.nat_port}` : ''}`
      : params?.ip;
    const w = nat ?? (params as NonNullable<typeof params>);
    err.write(
      `query: ${what} ${new Date(w.from).toISOString()} .. ${new Date(w.to).toISOString()}: ${Date.now() - started} ms${read}\n`,
    );
    return 0;
  } catch (e) {
    err.write(`query: ${(e as Error).message}\n`);
    return 2;
  } finally {
    await client.close();
  }
}
