import { headerSetsDedupToken, isStreamable, scanStatement } from './sql-scan';

describe('scanStatement: INSERT with inline data', () => {
  it('finds the data after FORMAT name and one line break', () => {
    const text = 'INSERT INTO db.t (a, b) FORMAT TabSeparated\n1\t2\n';
    const scan = scanStatement(text, false);
    expect(scan).toMatchObject({ keyword: 'INSERT', complete: true, insert: { format: 'TabSeparated' } });
    expect(text.slice(0, scan.insert!.headerEnd)).toBe('INSERT INTO db.t (a, b) FORMAT TabSeparated');
    expect(text.slice(scan.insert!.dataStart)).toBe('1\t2\n');
  });

  it('keeps leading whitespace of the next line as data', () => {
    const text = 'insert into t format TSV  \r\n  x\n';
    const scan = scanStatement(text, true);
    expect(text.slice(scan.insert!.dataStart)).toBe('  x\n');
  });

  it('handles VALUES, SETTINGS, quoted names and comments', () => {
    const text =
      "/* c */ INSERT INTO `my db`.\"t\" SETTINGS async_insert=1, format_csv_delimiter=';' VALUES (1, 'FORMAT x')";
    const scan = scanStatement(text, false);
    expect(scan.insert?.format).toBe('Values');
    expect(text.slice(scan.insert!.dataStart)).toBe(" (1, 'FORMAT x')");
  });

  it('waits for more input while the header may still be cut', () => {
    expect(scanStatement('INSERT INTO t FORMAT TabSep', false).complete).toBe(false);
    expect(scanStatement('INSERT INTO t FORMAT TSV   ', false).complete).toBe(false);
    expect(scanStatement('INSERT INTO t (a', false).complete).toBe(false);
    expect(scanStatement('INSERT INTO t FORMAT TSV\n', false)).toMatchObject({
      complete: true,
      insert: { dataStart: 25 },
    });
    expect(scanStatement('INSERT INTO t FORMAT TSV', true)).toMatchObject({
      complete: true,
      insert: { dataStart: 24 },
    });
  });

  it('treats INSERT … SELECT as a statement without data', () => {
    const scan = scanStatement('INSERT INTO t (a) SELECT number FROM numbers(3)', true);
    expect(scan).toMatchObject({ keyword: 'INSERT', complete: true, multiStatement: false });
    expect(scan.insert).toBeUndefined();
  });

  it('is not fooled by column names inside parentheses', () => {
    const text = 'INSERT INTO t (format, values) FORMAT JSONEachRow\n{}';
    expect(scanStatement(text, false).insert?.format).toBe('JSONEachRow');
  });
});

describe('scanStatement: queries', () => {
  it('finds the trailing FORMAT clause, also before SETTINGS', () => {
    expect(scanStatement('SELECT 1 FORMAT JSONEachRow', true).outputFormat).toBe('JSONEachRow');
    expect(scanStatement('SELECT 1 FORMAT JSON SETTINGS max_threads = 1', true).outputFormat).toBe('JSON');
    expect(scanStatement('SELECT format FROM t', true).outputFormat).toBeUndefined();
    expect(scanStatement("SELECT format('{}', 'FORMAT CSV')", true).outputFormat).toBeUndefined();
  });

  it('detects multi-statements but allows a trailing semicolon', () => {
    expect(scanStatement('SELECT 1;', true).multiStatement).toBe(false);
    expect(scanStatement('SELECT 1; -- done\n', true).multiStatement).toBe(false);
    expect(scanStatement("SELECT ';'; DROP TABLE t", true).multiStatement).toBe(true);
    expect(scanStatement('SET a = 1; SELECT 1', true).multiStatement).toBe(true);
  });

  it('reports the first keyword', () => {
    expect(scanStatement('  -- x\n with 1 AS a SELECT a', true).keyword).toBe('WITH');
    expect(scanStatement('', true)).toMatchObject({ keyword: '', complete: true });
  });
});

describe('helpers', () => {
  it('knows which statements stream', () => {
    expect(isStreamable('SELECT')).toBe(true);
    expect(isStreamable('WITH')).toBe(true);
    expect(isStreamable('SHOW')).toBe(false);
    expect(isStreamable('CREATE')).toBe(false);
  });

  it('sees a dedup token in an INSERT header', () => {
    expect(headerSetsDedupToken("INSERT INTO t SETTINGS insert_deduplication_token='x' FORMAT TSV")).toBe(
      true,
    );
    expect(headerSetsDedupToken('INSERT INTO t FORMAT TSV')).toBe(false);
  });
});
