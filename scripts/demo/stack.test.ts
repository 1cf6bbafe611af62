import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pruneToLogs } from './stack';

describe('pruneToLogs', () => {
  it('keeps only *.log files and drops directories left empty', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-prune-'));
    const write = (rel: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), 'x');
    };
    [
      'operator.log',
      'state.json',
      'pods/w-0/worker.log',
      'pods/w-0/etc/logpipeline/config.json',
      'bed/kafka/data/00000.index',
      'bed/kafka/data/firewall.logs-0/00000000000000000000.log',
      'bed/kafka/kafka.log',
      'bed/clickhouse/data/store/a.bin',
    ].forEach(write);
    pruneToLogs(dir);
    const left: string[] = [];
    const walk = (d: string) =>
      fs
        .readdirSync(d, { withFileTypes: true })
        .forEach((e) =>
          e.isDirectory() ? walk(path.join(d, e.name)) : left.push(path.relative(dir, path.join(d, e.name))),
        );
    walk(dir);
    expect(left.sort()).toEqual(['bed/kafka/kafka.log', 'operator.log', 'pods/w-0/worker.log']);
    expect(fs.existsSync(path.join(dir, 'bed/clickhouse'))).toBe(false);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
