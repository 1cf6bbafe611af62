/**
 * Option parsing shared by `logpipeline verify` and `logpipeline query`: `--name value`,
 * `--name=value` and bare flags; the ClickHouse connection from flags or the environment (so a
 * password need not appear in the process list); time bounds as ISO 8601 or epoch numbers.
 */
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';

/** Thrown for bad command lines; the CLIs print it with their usage and exit 2. */
export class UsageError extends Error {}

/** Parsed options: values by name, and which bare flags were given. */
export interface ParsedArgs {
  values: Map<string, string>;
  flags: Set<string>;
}

/** Parses argv against the known value options and flags; unknown options are usage errors. */
export function parseArgs(
  argv: readonly string[],
  valueNames: readonly string[],
  flagNames: readonly string[],
): ParsedArgs {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument ${JSON.stringify(arg)}`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (flagNames.includes(name) && eq < 0) {
      flags.add(name);
    } else if (valueNames.includes(name)) {
      const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      values.set(name, value);
    } else {
      throw new UsageError(`unknown option --${name}`);
    }
  }
  return { values, flags };
}

/** Options every ClickHouse-reading command accepts. */
export const CONNECTION_OPTIONS = ['clickhouse-url', 'user', 'password'] as const;

/**
 * Opens a client from --clickhouse-url/--user/--password, else CLICKHOUSE_URL/CLICKHOUSE_USER/
 * CLICKHOUSE_PASSWORD (LP_CLICKHOUSE_* also accepted). Long streamed reads get a generous timeout.
 */
export function connect(
  args: ParsedArgs,
  env: NodeJS.ProcessEnv,
  requestTimeoutMs = 3_600_000,
): ClickHouseClient {
  const url = args.values.get('clickhouse-url') ?? env.CLICKHOUSE_URL ?? env.LP_CLICKHOUSE_URL;
  if (!url) throw new UsageError('no ClickHouse URL: pass --clickhouse-url or set CLICKHOUSE_URL');
  return createClient({
    url,
    username: args.values.get('user') ?? env.CLICKHOUSE_USER ?? env.LP_CLICKHOUSE_USER ?? 'default',
    password: args.values.get('password') ?? env.CLICKHOUSE_PASSWORD ?? env.LP_CLICKHOUSE_PASSWORD ?? '',
    request_timeout: requestTimeoutMs,
    log: { level: ClickHouseLogLevel.OFF },
  });
}

/** Parses a time bound: ISO 8601 (with zone, else UTC) or epoch seconds (< 1e11) / milliseconds. */
export function parseTime(text: string, what: string): number {
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    return n < 1e11 ? n * 1000 : n;
  }
  const withZone = /([zZ]|[+-]\d\d:?\d\d)$/.test(text) || !/\d\d:\d\d/.test(text) ? text : `${text}Z`;
  const ms = Date.parse(withZone);
  if (Number.isNaN(ms))
    throw new UsageError(`${what} ${JSON.stringify(text)} is not an ISO 8601 time or epoch number`);
  return ms;
}

/** Required option value or a usage error. */
export function required(args: ParsedArgs, name: string): string {
  const v = args.values.get(name);
  if (v === undefined || v === '') throw new UsageError(`--${name} is required`);
  return v;
}
