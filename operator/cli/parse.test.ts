import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { runParse } from './parse';

async function run(
  argv: string[],
  input: Buffer | string[],
): Promise<{ code: number; rows: Array<Record<string, unknown>> }> {
  const stdin = Readable.from(Array.isArray(input) ? input.map((c) => Buffer.from(c)) : [input]);
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(c));
  const code = await runParse(argv, stdin, stdout);
  const text = Buffer.concat(chunks).toString('utf8');
  return {
    code,
    rows:
      text === ''
        ? []
        : text
            .trimEnd()
            .split('\n')
            .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('logpipeline parse', () => {
  it('writes one JSON object per line: parsed rows with column-source keys, or dead letters', async () => {
    const input = Buffer.concat([
      Buffer.from('<134>Jan 15 10:23:45 host CEF:0|A|B|1|2|n|5|src=10.0.0.1 dst=2001:db8::2 act=drop\r\n'),
      Buffer.from('srcip=10.0.0.1 msg="'),
      Buffer.of(0xff),
      Buffer.from('"\n\nnot a log'),
    ]);
    const { code, rows } = await run(['--format', 'auto', '--timezone', 'Europe/Istanbul'], input);
    expect(code).toBe(0);
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatchObject({
      vendor: 'cef',
      device: 'host',
      src_ip: '10.0.0.1',
      dst_ip: '2001:db8::2',
      action: 'drop',
      'field:act': 'drop',
    });
    expect(rows[0].raw).toBe(
      '<134>Jan 15 10:23:45 host CEF:0|A|B|1|2|n|5|src=10.0.0.1 dst=2001:db8::2 act=drop',
    );
    expect(rows[1]).toEqual({ deadLetter: 'invalid_utf8', line: 'srcip=10.0.0.1 msg="\ufffd"' });
    expect(rows[2]).toEqual({ deadLetter: 'empty_line', line: '' });
    expect(rows[3]).toEqual({ deadLetter: 'unknown_format', line: 'not a log' });
  });

  it('reassembles lines split across input chunks and honours --require and --max-line-bytes', async () => {
    const { rows } = await run(
      ['--format', 'fortigate', '--require', 'src_ip', '--max-line-bytes', '40'],
      [
        'srcip=10.0.0.1 dst',
        'ip=10.0.0.2\ntype=event msg=x\nsrcip=10.0.0.1 msg="far too long for the limit"\n',
      ],
    );
    expect(rows.map((r) => r.deadLetter ?? r.dst_ip)).toEqual([
      '10.0.0.2',
      'missing_field:src_ip',
      'line_too_long',
    ]);
  });

  it('returns 2 on usage errors', async () => {
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect((await run(['--format', 'xml'], [])).code).toBe(2);
      expect((await run(['--bogus', '1'], [])).code).toBe(2);
      expect((await run(['--format'], [])).code).toBe(2);
      expect(stderr).toHaveBeenCalledWith(expect.stringContaining('usage: logpipeline parse'));
    } finally {
      stderr.mockRestore();
    }
  });
});

describe('logpipeline parse -f pipeline.yaml', () => {
  const file = path.join(__dirname, '../../examples/formats/kv.yaml');

  it("runs the pipeline's own kv format and requiredFields, and shows shapes of rows without src_ip", async () => {
    const { code, rows } = await run(
      ['-f', file],
      [
        'id=firewall time="2025-03-14 09:12:03" fw="SN1" src=10.0.0.5 srcport=51000 dst=198.51.100.7 dstport=443 natsrc=203.0.113.9 natsrcport=40001 action=pass\n',
        'id=firewall time="2025-03-14 09:12:04" fw="SN1" dst=198.51.100.7 action=block\n',
      ],
    );
    expect(code).toBe(0);
    expect(rows[0]).toMatchObject({
      vendor: 'kv',
      src_ip: '10.0.0.5',
      nat_src_ip: '203.0.113.9',
      action: 'allow',
    });
    expect(rows[1]).toMatchObject({
      deadLetter: 'missing_field:src_ip',
      shape: expect.stringMatching(/^kv#[0-9a-f]{8}$/),
    });
  });

  it('refuses a pipeline admission would refuse, with the rule message', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parse-f-'));
    const bad = path.join(dir, 'p.yaml');
    fs.writeFileSync(
      bad,
      fs.readFileSync(file, 'utf8').replace("keyValueDelimiter: '='", "keyValueDelimiter: ' '"),
    );
    const err: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((c) => (err.push(String(c)), true));
    try {
      expect((await run(['-f', bad], [])).code).toBe(2);
    } finally {
      spy.mockRestore();
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(err.join('')).toMatch(/pairDelimiter and keyValueDelimiter must be different/);
  });
});
