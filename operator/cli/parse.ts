/**
 * `logpipeline parse --format <fmt|auto> [--timezone Europe/Istanbul] [--max-line-bytes N]
 * [--require src_ip,dst_ip]` or `logpipeline parse -f pipeline.yaml` (the pipeline's own parser
 * configuration: format, zone, requiredFields, declarative formats and rules, validated as admission
 * would): reads lines on stdin and writes one JSON object per line — the
 * parsed row keyed by column-source names (`timestamp`, `src_ip`, …, `field:<key>`), or
 * `{"deadLetter": reason, "line": …}`. Rows without src_ip carry their `shape` (`<vendor>#<hash>`,
 * as the ParserCoverage condition names them). Invalid UTF-8 in echoed lines is shown as U+FFFD so the
 * output is always valid JSON. Lines are handled as bytes, exactly as the worker sees them.
 */
import { LineParser, ParserOptions } from '../../consumer/src/parse/parser';
import fs from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { resolveSpec } from '../src/api/defaults';
import type { LogPipeline } from '../src/api/types';
import { formatValidationError, validatePipeline } from '../src/api/validate';
import { lineShape, shapeId } from '../../consumer/src/encode/identity-stats';
import { FORMAT_NAMES, VENDOR_NAMES } from '../../consumer/src/parse/record';
import { recordToObject } from '../../consumer/src/parse/to-json';

const USAGE =
  'usage: logpipeline parse --format <auto|' +
  FORMAT_NAMES.join('|') +
  '> [--timezone <IANA zone or ±hh:mm>] [--max-line-bytes <n>] [--require <source,…>]\n' +
  "       logpipeline parse -f pipeline.yaml   (the LogPipeline's own parser configuration)";

function parseArgs(argv: string[]): ParserOptions {
  const options: ParserOptions = { format: 'auto', collectFields: true };
  const file = argv.indexOf('-f') >= 0 ? argv.indexOf('-f') : argv.indexOf('--file');
  if (file >= 0) {
    if (argv.length !== 2 || argv[file + 1] === undefined)
      throw new UsageError('-f takes a file and no other flags');
    return { ...pipelineParserOptions(argv[file + 1]), collectFields: true };
  }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--help' || flag === '-h') throw new UsageError('');
    if (value === undefined) throw new UsageError(`missing value for ${flag}`);
    i++;
    if (flag === '--format') options.format = value;
    else if (flag === '--timezone') options.timezone = value;
    else if (flag === '--max-line-bytes') options.maxLineBytes = positiveInt(value, flag);
    else if (flag === '--require') options.required = value.split(',').filter((s) => s !== '');
    else throw new UsageError(`unknown flag ${flag}`);
  }
  return options;
}

class UsageError extends Error {}

/** The parser options of the (single) LogPipeline in a YAML file, after offline admission checks. */
function pipelineParserOptions(file: string): ParserOptions {
  const docs = parseAllDocuments(fs.readFileSync(file, 'utf8')).map((d) => d.toJS() as { kind?: string });
  const pipelines = docs.filter((d) => d?.kind === 'LogPipeline') as LogPipeline[];
  if (pipelines.length !== 1)
    throw new UsageError(`${file}: expected exactly one LogPipeline, found ${pipelines.length}`);
  const errors = validatePipeline(pipelines[0]);
  if (errors.length > 0) throw new UsageError(errors.map(formatValidationError).join('\n'));
  return resolveSpec(pipelines[0]).parser;
}

function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} needs a positive integer`);
  return n;
}

/** Writes `text`, waiting for the stream to drain when its buffer is full. */
async function write(stdout: NodeJS.WritableStream, text: string): Promise<void> {
  if (!stdout.write(text)) await new Promise<void>((resolve) => stdout.once('drain', () => resolve()));
}

/** Streams newline-separated lines (as Buffers, without the newline and a trailing CR). */
async function* lines(stdin: NodeJS.ReadableStream): AsyncGenerator<Buffer> {
  let carry: Buffer = Buffer.alloc(0);
  for await (const chunk of stdin as AsyncIterable<Buffer | string>) {
    const data: Buffer = carry.length ? Buffer.concat([carry, Buffer.from(chunk)]) : Buffer.from(chunk);
    let pos = 0;
    for (let nl = data.indexOf(10, pos); nl >= 0; nl = data.indexOf(10, pos)) {
      yield data.subarray(pos, nl > pos && data[nl - 1] === 13 ? nl - 1 : nl);
      pos = nl + 1;
    }
    carry = Buffer.from(data.subarray(pos));
  }
  if (carry.length > 0) yield carry[carry.length - 1] === 13 ? carry.subarray(0, carry.length - 1) : carry;
}

/**
 * Runs the parse command; resolves to the exit code (0 ok, 2 usage error). Dead-lettered lines
 * are part of the output, not errors.
 */
export async function runParse(
  argv: string[],
  stdin: NodeJS.ReadableStream,
  stdout: NodeJS.WritableStream,
): Promise<number> {
  let parser: LineParser;
  try {
    parser = new LineParser(parseArgs(argv));
  } catch (err) {
    const message = (err as Error).message;
    process.stderr.write(`${message ? `${message}\n` : ''}${USAGE}\n`);
    return 2;
  }
  parser.setReferenceTime(Date.now());
  let out = '';
  for await (const line of lines(stdin)) {
    const reason = parser.parse(line, 0, line.length);
    const rec = parser.record;
    const row = reason === null ? recordToObject(rec) : { deadLetter: reason, line: line.toString('utf8') };
    if ((reason === null || reason.startsWith('missing_field:')) && rec.srcIpVersion === 0)
      row.shape = shapeId(VENDOR_NAMES[rec.format] ?? 'unknown', lineShape(line, 0, line.length));
    out += `${JSON.stringify(row)}\n`;
    if (out.length >= 64 * 1024) {
      await write(stdout, out);
      out = '';
    }
  }
  if (out.length > 0) await write(stdout, out);
  return 0;
}
