import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cdsArgs, classpath, pendingDump, settleDump } from './kafka-jvm';

let libs: string;
const FLAGS = ['-XX:+UseSerialGC'];

beforeEach(() => {
  libs = fs.mkdtempSync(path.join(os.tmpdir(), 'kafka-jvm-test-'));
  for (const jar of ['zstd-jni.jar', 'kafka_2.13.jar', 'HdrHistogram.jar'])
    fs.writeFileSync(path.join(libs, jar), '');
  fs.writeFileSync(path.join(libs, '.complete'), '');
});
afterEach(() => fs.rmSync(libs, { recursive: true, force: true }));

function dumpOf(args: string[]): string {
  const dump = pendingDump({ name: 'k', command: 'java', args, env: {}, logFile: '/dev/null', pid: 1 });
  if (!dump) throw new Error('no dump requested');
  return dump;
}

describe('classpath', () => {
  it('lists only the jars, in a stable sorted order', () => {
    const jars = classpath(libs)
      .split(path.delimiter)
      .map((j) => path.basename(j));
    expect(jars).toEqual(['HdrHistogram.jar', 'kafka_2.13.jar', 'zstd-jni.jar']);
  });
});

describe('CDS archives', () => {
  it('asks the first JVM to dump an archive, and later JVMs to use the promoted one', () => {
    const first = cdsArgs(libs, 'broker', FLAGS);
    expect(first.dump).toBeDefined();
    expect(dumpOf(first.args)).toBe(first.dump);
    fs.writeFileSync(first.dump!, 'archive');
    settleDump(first.dump, true);

    const next = cdsArgs(libs, 'broker', FLAGS);
    expect(next.dump).toBeUndefined();
    const shared = next.args.find((a) => a.startsWith('-XX:SharedArchiveFile='));
    expect(shared && fs.readFileSync(shared.split('=')[1], 'utf8')).toBe('archive');
  });

  it('discards the dump of a JVM that did not exit cleanly', () => {
    const { dump } = cdsArgs(libs, 'broker', FLAGS);
    fs.writeFileSync(dump!, 'truncated');
    settleDump(dump, false);
    expect(fs.existsSync(dump!)).toBe(false);
    expect(cdsArgs(libs, 'broker', FLAGS).dump).toBeDefined();
  });

  it('keeps separate archives per role and per JVM flags', () => {
    const a = cdsArgs(libs, 'broker', FLAGS).dump!;
    const b = cdsArgs(libs, 'format', FLAGS).dump!;
    const c = cdsArgs(libs, 'broker', ['-XX:+UseG1GC']).dump!;
    expect(new Set([a, b, c].map((d) => d.replace(/\.[^.]+\.tmp$/, ''))).size).toBe(3);
  });

  it('removes temp dumps abandoned long ago', () => {
    const { dump } = cdsArgs(libs, 'broker', FLAGS);
    fs.writeFileSync(dump!, 'abandoned');
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(dump!, old, old);
    cdsArgs(libs, 'broker', FLAGS);
    expect(fs.existsSync(dump!)).toBe(false);
  });
});
