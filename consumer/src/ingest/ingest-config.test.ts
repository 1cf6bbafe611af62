import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { INGEST_DEFAULTS } from '../../../common/src/ingest-config';
import { loadIngestConfig } from './ingest-config';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function write(content: unknown): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingest-cfg-'));
  dirs.push(dir);
  const file = path.join(dir, 'ingest.json');
  fs.writeFileSync(file, JSON.stringify(content));
  return file;
}

const minimal = {
  pipeline: { namespace: 'ns', name: 'fw' },
  kafka: { brokers: ['127.0.0.1:9092'], topic: 't', clientId: 'c', groupId: 'g' },
  listeners: [{ name: 'tcp', transport: 'tcp', port: 10514 }],
};

describe('loadIngestConfig', () => {
  it('fills every omitted field from INGEST_DEFAULTS', () => {
    const cfg = loadIngestConfig({ LP_CONFIG: write({ ...minimal, packing: { maxLines: 10 } }) });
    expect(cfg.packing).toEqual({ ...INGEST_DEFAULTS.packing, maxLines: 10 });
    expect(cfg.maxBytesHeld).toBe(INGEST_DEFAULTS.maxBytesHeld);
    expect(cfg.allowedSourceCIDRs).toEqual([]);
    expect(cfg.compression).toBe('lz4');
  });

  it('refuses a tls listener without tls material, naming the file', () => {
    const file = write({ ...minimal, listeners: [{ name: 'tls', transport: 'tls', port: 6514 }] });
    expect(() => loadIngestConfig({ LP_CONFIG: file })).toThrow(`${file}: a tls listener needs tls`);
  });

  it('refuses duplicate listener names and a missing topic', () => {
    const dup = write({ ...minimal, listeners: [...minimal.listeners, ...minimal.listeners] });
    expect(() => loadIngestConfig({ LP_CONFIG: dup })).toThrow('listener name tcp is used twice');
    const noTopic = write({ ...minimal, kafka: { brokers: ['b:9092'] } });
    expect(() => loadIngestConfig({ LP_CONFIG: noTopic })).toThrow(
      'kafka.brokers and kafka.topic are required',
    );
  });

  it('refuses a frame limit above the message limit (such a line could never be packed)', () => {
    const file = write({ ...minimal, maxFrameBytes: 2048, packing: { maxBytes: 1024 } });
    expect(() => loadIngestConfig({ LP_CONFIG: file })).toThrow('maxFrameBytes must not exceed');
  });
});
