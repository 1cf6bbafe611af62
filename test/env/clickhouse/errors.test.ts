import { parseError } from '@clickhouse/client';
import { extractErrorAtTheEndOfChunk } from '@clickhouse/client';
import {
  formatErrorText,
  formatStreamException,
  httpStatusFor,
  serverError,
  ServerError,
  toServerError,
} from './errors';

describe('toServerError', () => {
  it('takes code and name from an engine message', () => {
    const err = toServerError(
      new Error(
        "Code: 60. DB::Exception: Unknown table expression identifier 'nope' in scope SELECT * FROM nope. (UNKNOWN_TABLE)",
      ),
    );
    expect(err).toMatchObject({
      code: 60,
      type: 'UNKNOWN_TABLE',
      message: "Unknown table expression identifier 'nope' in scope SELECT * FROM nope.",
    });
  });

  it('drops the nested prefix some engine errors carry', () => {
    const err = toServerError(
      new Error("Code: 115. DB::Exception: Code: 115. DB::Exception: Unknown setting 'x'. (UNKNOWN_SETTING)"),
    );
    expect(err).toMatchObject({ code: 115, type: 'UNKNOWN_SETTING', message: "Unknown setting 'x'." });
  });

  it('prefers the typed clickhouseCode of a chdb error', () => {
    const chdbError = Object.assign(
      new Error('Code: 62. DB::Exception: Syntax error: failed at position 1. (SYNTAX_ERROR)'),
      { clickhouseCode: 62 },
    );
    expect(toServerError(chdbError)).toMatchObject({ code: 62, type: 'SYNTAX_ERROR' });
  });

  it('reports anything else as STD_EXCEPTION', () => {
    expect(toServerError(new Error('socket hang up'))).toMatchObject({
      code: 1001,
      type: 'STD_EXCEPTION',
      message: 'socket hang up',
    });
  });

  it('passes ServerErrors through', () => {
    const err = serverError('AUTHENTICATION_FAILED', 'x');
    expect(toServerError(err)).toBe(err);
  });
});

describe('httpStatusFor', () => {
  it.each([
    ['AUTHENTICATION_FAILED', 403],
    ['REQUIRED_PASSWORD', 401],
    ['SYNTAX_ERROR', 400],
    ['CANNOT_PARSE_IPV4', 400],
    ['UNKNOWN_TABLE', 404],
    ['UNKNOWN_DATABASE', 404],
    ['TIMEOUT_EXCEEDED', 408],
    ['NOT_IMPLEMENTED', 501],
    ['MEMORY_LIMIT_EXCEEDED', 500],
    ['READONLY', 500],
  ])('%s -> %d', (type, status) => {
    expect(httpStatusFor(type)).toBe(status);
  });
});

describe('error bodies', () => {
  const err = new ServerError(60, 'UNKNOWN_TABLE', 'Table db.t does not exist');

  it('renders the server format, which the client parses back', () => {
    const text = formatErrorText(err, '26.7.2.1');
    expect(text).toBe(
      'Code: 60. DB::Exception: Table db.t does not exist. (UNKNOWN_TABLE) (version 26.7.2.1 (official build))',
    );
    expect(parseError(text)).toMatchObject({
      code: '60',
      type: 'UNKNOWN_TABLE',
      message: 'Table db.t does not exist. ',
    });
  });

  it('renders the in-stream exception block the client extracts by tag', () => {
    const rows = Buffer.from('1\n2\n');
    const block = Buffer.from(formatStreamException(formatErrorText(err, '26.7.2.1'), 'abcdef0123456789'));
    const parsed = extractErrorAtTheEndOfChunk(Buffer.concat([rows, block]), 'abcdef0123456789');
    expect(parsed).toMatchObject({ code: '60', type: 'UNKNOWN_TABLE' });
  });
});
