import { buildSetStatement, credentialsOf, quoteIdentifier, quoteLiteral, splitParams } from './http-params';

describe('splitParams', () => {
  it('separates protocol parameters, query parameters and settings', () => {
    const search = new URLSearchParams(
      'query=SELECT+1&database=lp&default_format=JSONEachRow&query_id=q1&session_id=s1&session_timeout=30' +
        '&user=u&password=p&wait_end_of_query=1&param_ip=10.0.0.1&insert_deduplication_token=t1&async_insert=1' +
        '&enable_http_compression=1&max_threads=2',
    );
    expect(splitParams(search)).toEqual({
      query: 'SELECT 1',
      database: 'lp',
      defaultFormat: 'JSONEachRow',
      queryId: 'q1',
      sessionId: 's1',
      sessionTimeoutSec: 30,
      sessionCheck: false,
      closeSession: false,
      waitEndOfQuery: true,
      settings: {
        insert_deduplication_token: 't1',
        async_insert: '1',
        enable_http_compression: '1',
        max_threads: '2',
      },
      queryParams: { ip: '10.0.0.1' },
    });
  });

  it('takes database and format from headers when the URL has none', () => {
    const params = splitParams(new URLSearchParams(''), {
      'x-clickhouse-database': 'logs',
      'x-clickhouse-format': 'CSV',
    });
    expect(params).toMatchObject({
      database: 'logs',
      defaultFormat: 'CSV',
      waitEndOfQuery: false,
      settings: {},
    });
  });
});

describe('credentialsOf', () => {
  const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;

  it('reads Basic auth first, keeping colons in the password', () => {
    const search = new URLSearchParams('user=other&password=x');
    expect(credentialsOf(search, { authorization: basic('alice:pa:ss') })).toEqual({
      user: 'alice',
      password: 'pa:ss',
    });
  });

  it('reads X-ClickHouse-User/Key, then URL parameters, then defaults', () => {
    expect(
      credentialsOf(new URLSearchParams(), { 'x-clickhouse-user': 'bob', 'x-clickhouse-key': 'k' }),
    ).toEqual({ user: 'bob', password: 'k' });
    expect(credentialsOf(new URLSearchParams('user=carol&password=c'), {})).toEqual({
      user: 'carol',
      password: 'c',
    });
    expect(credentialsOf(new URLSearchParams(), {})).toEqual({ user: 'default', password: '' });
  });
});

describe('buildSetStatement', () => {
  it('quotes every value and puts readonly last', () => {
    expect(buildSetStatement({ readonly: '2', max_threads: '4', format_csv_delimiter: "'" })).toBe(
      "SET max_threads = '4', format_csv_delimiter = '\\'', readonly = '2'",
    );
  });

  it('returns undefined for no settings and rejects names that are not identifiers', () => {
    expect(buildSetStatement({})).toBeUndefined();
    expect(() => buildSetStatement({ 'x = 1; DROP TABLE t; --': '1' })).toThrow(
      expect.objectContaining({ code: 115, type: 'UNKNOWN_SETTING' }),
    );
  });
});

describe('quoting', () => {
  it('escapes backslashes and quotes', () => {
    expect(quoteLiteral("a\\b'c")).toBe("'a\\\\b\\'c'");
    expect(quoteIdentifier('we`ird')).toBe('`we\\`ird`');
  });
});
