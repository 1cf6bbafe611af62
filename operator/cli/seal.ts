/**
 * `logpipeline seal`: daily sealed evidence (docs/compliance.md, "Daily sealed evidence").
 *   seal --date D …          seal one complete UTC day of a table (idempotent: a sealed day is left alone)
 *   seal export --date D …   write a stored seal as the auditor's plain files
 * Exit 0 when sealed (or already sealed) / exported intact, 1 when the rows no longer match the
 * seal, 2 on usage errors, 3 when the seal is refused (day incomplete, no seal table, TSA failed).
 */
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import type { Writable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { loadSigningKey, loadVerifyKey } from '../../common/src/integrity/checkpoint';
import type { TsaClientAuth } from '../../common/src/integrity/tsa-request';
import { parseDuration } from '../src/api/duration';
import {
  connect,
  CONNECTION_OPTIONS,
  parseArgs,
  required,
  UsageError,
  type ParsedArgs,
} from '../src/compliance/cli-options';
import { exportSeal, sealDay, SealRefused } from '../src/compliance/seal';
import { dayWindow } from '../src/compliance/seal-manifest';
import { formatSealReport, verifySealFiles } from '../src/compliance/seal-verify';

const USAGE = `usage: logpipeline seal --date YYYY-MM-DD --database DB --table T --signing-key FILE --tsa-url URL [options]
       logpipeline seal export --date YYYY-MM-DD --database DB --table T --out DIR

  --clickhouse-url URL --user U --password P   connection (or CLICKHOUSE_URL, CLICKHOUSE_USER, CLICKHOUSE_PASSWORD)
  --date YYYY-MM-DD        the day to seal (must have ended, plus --grace)
  --timezone ZONE          IANA time zone of the day's boundaries (default UTC), e.g. Europe/Istanbul
  --signing-key FILE       Ed25519 private key (PEM, PKCS#8): the pipeline's checkpoint key
  --tsa-url URL            RFC 3161 Time Stamping Authority (or --no-timestamp)
  --tsa-username U         HTTP basic auth user; the password from --tsa-password-file or TSA_PASSWORD
  --tsa-client-cert FILE --tsa-client-key FILE   TLS client certificate for a TSA requiring mTLS
  --tsa-server-ca FILE     CA of the TSA's HTTPS certificate, when not a public one
  --grace DURATION         wait this long after the day ends for late lines (default 1h)
  --pipeline NS/NAME       the pipeline, when several write the table
  --out DIR                also write the export, manifest, signature and token files there
`;

const VALUES = [
  ...CONNECTION_OPTIONS,
  'date',
  'timezone',
  'database',
  'table',
  'signing-key',
  'tsa-url',
  'tsa-username',
  'tsa-password-file',
  'tsa-client-cert',
  'tsa-client-key',
  'tsa-server-ca',
  'grace',
  'pipeline',
  'out',
];
const FLAGS = ['no-timestamp', 'help'];

function readFile(args: ParsedArgs, name: string): string | undefined {
  const file = args.values.get(name);
  return file === undefined ? undefined : fs.readFileSync(file, 'utf8');
}

/** TSA credentials from files and the environment (never from a command-line value: ps shows those). */
export function tsaAuthFrom(args: ParsedArgs, env: NodeJS.ProcessEnv): TsaClientAuth {
  const passwordFile = args.values.get('tsa-password-file');
  const password = passwordFile ? fs.readFileSync(passwordFile, 'utf8').trim() : env.TSA_PASSWORD;
  return {
    username: args.values.get('tsa-username') ?? env.TSA_USERNAME,
    password,
    clientCertPem: readFile(args, 'tsa-client-cert'),
    clientKeyPem: readFile(args, 'tsa-client-key'),
    caPem: readFile(args, 'tsa-server-ca'),
  };
}

function day(args: ParsedArgs): string {
  const d = required(args, 'date');
  try {
    dayWindow(d, args.values.get('timezone'));
  } catch (err) {
    throw new UsageError(`--date: ${(err as Error).message}`);
  }
  return d;
}

async function runSealDay(client: ClickHouseClient, args: ParsedArgs, env: NodeJS.ProcessEnv, out: Writable) {
  const tsaUrl = args.values.get('tsa-url');
  if (!tsaUrl && !args.flags.has('no-timestamp'))
    throw new UsageError('give --tsa-url (RFC 3161 timestamp of the manifest) or --no-timestamp');
  const grace = args.values.get('grace') ?? '1h';
  const graceMs = parseDuration(grace);
  if (graceMs === undefined) throw new UsageError(`--grace ${grace} is not a duration`);
  const result = await sealDay(client, {
    database: required(args, 'database'),
    table: required(args, 'table'),
    day: day(args),
    timeZone: args.values.get('timezone'),
    pipeline: args.values.get('pipeline'),
    signingKey: loadSigningKey(fs.readFileSync(required(args, 'signing-key'), 'utf8')),
    tsaUrl,
    tsaAuth: tsaAuthFrom(args, env),
    graceMs,
    outDir: args.values.get('out'),
  });
  const r = result.record;
  const what = result.status === 'sealed' ? 'sealed' : 'already sealed (nothing done)';
  out.write(`${what}: ${r.table_name} ${r.day}, ${r.row_count} rows, export sha256 ${r.export_sha256}\n`);
  for (const f of result.files ?? []) out.write(`  wrote ${f}\n`);
  if (!result.files && args.values.has('out'))
    out.write(`  no files written: get them with 'logpipeline seal export --date ${r.day} --out DIR'\n`);
  return 0;
}

async function runExport(client: ClickHouseClient, args: ParsedArgs, out: Writable): Promise<number> {
  const result = await exportSeal(client, {
    database: required(args, 'database'),
    table: required(args, 'table'),
    day: day(args),
    outDir: required(args, 'out'),
  });
  for (const f of result.files) out.write(`wrote ${f}\n`);
  if (result.matches) return 0;
  out.write(
    `MODIFIED: the rows of ${result.record.day} in ClickHouse no longer give the sealed export ` +
      `(now ${result.digest.rows} rows, sha256 ${result.digest.sha256}; sealed ${result.record.row_count} rows, sha256 ${result.record.export_sha256})\n`,
  );
  return 1;
}

/** Runs `seal` / `seal export` with argv (after the command name); resolves the exit code. */
export async function runSeal(
  argv: string[],
  out: Writable,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const isExport = argv[0] === 'export';
  let args: ParsedArgs;
  try {
    args = parseArgs(isExport ? argv.slice(1) : argv, VALUES, FLAGS);
    if (args.flags.has('help')) {
      out.write(USAGE);
      return 0;
    }
  } catch (err) {
    out.write(`seal: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  let client: ClickHouseClient | undefined;
  try {
    client = connect(args, env);
    return isExport ? await runExport(client, args, out) : await runSealDay(client, args, env, out);
  } catch (err) {
    out.write(`seal: ${(err as Error).message}\n${err instanceof UsageError ? USAGE : ''}`);
    return err instanceof UsageError ? 2 : err instanceof SealRefused ? 3 : 1;
  } finally {
    await client?.close();
  }
}

function readCAs(file: string): X509Certificate[] {
  const pem = fs.readFileSync(file, 'utf8');
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new UsageError(`--tsa-ca ${file} holds no PEM certificate`);
  return blocks.map((b) => new X509Certificate(b));
}

/** `verify --seal DIR|MANIFEST [--public-key F | --no-signature-check] [--tsa-ca F]`: exit 0 verified, 1 findings. */
export async function runSealVerify(args: ParsedArgs, out: Writable): Promise<number> {
  const key = args.values.get('public-key');
  const ca = args.values.get('tsa-ca');
  const report = await verifySealFiles(required(args, 'seal'), {
    publicKey: key ? loadVerifyKey(fs.readFileSync(key, 'utf8')) : undefined,
    skipSignatureCheck: args.flags.has('no-signature-check'),
    tsaCAs: ca ? readCAs(ca) : undefined,
  });
  out.write(
    args.values.get('output') === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatSealReport(report),
  );
  return report.ok ? 0 : 1;
}
