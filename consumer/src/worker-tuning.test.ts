import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkerConfig } from '../../common/src/worker-config';
import { applyArgs } from './main';
import { kafkaClientConfig, readSecrets, resolveTuning } from './worker-tuning';

function config(overrides: Partial<WorkerConfig> = {}): WorkerConfig {
  return {
    pipeline: { namespace: 'ns', name: 'p', uid: 'u' },
    kafka: { brokers: ['b:9092'], topic: 't', groupId: 'g', clientId: 'c' },
    parser: { format: 'auto', timezone: 'UTC', maxLineBytes: 65536, staticFields: {} },
    clickhouse: { url: 'http://ch:8123', database: 'db', table: 'fw', columns: [] },
    batch: { maxRows: 100_000, maxBytes: 16 * 1024 * 1024, maxDelayMs: 1_000 },
    deadLetter: { enabled: false },
    integrity: { enabled: false, table: 'i', checkpointTable: 'c', checkpointIntervalMs: 1 },
    httpPort: 8080,
    ...overrides,
  };
}

describe('resolveTuning', () => {
  it('derives the in-flight budget from the batch size within bounds, and keeps overrides', () => {
    expect(resolveTuning(config()).maxInFlightBytes).toBe(128 * 1024 * 1024);
    expect(
      resolveTuning(config({ batch: { maxRows: 10, maxBytes: 1024, maxDelayMs: 100 } })).maxInFlightBytes,
    ).toBe(64 * 1024 * 1024);
    expect(
      resolveTuning(config({ batch: { maxRows: 10, maxBytes: 1 << 30, maxDelayMs: 100 } })).maxInFlightBytes,
    ).toBe(512 * 1024 * 1024);
    const t = resolveTuning(config({ tuning: { maxInFlightBytes: 5, insertConcurrency: 9 } }));
    expect([t.maxInFlightBytes, t.insertConcurrency, t.drainTimeoutMs]).toEqual([5, 9, 25_000]);
    expect(resolveTuning(config({ batch: { maxRows: 1, maxBytes: 1, maxDelayMs: 4 } })).fetchMaxWaitMs).toBe(
      10,
    );
  });
});

describe('secrets and kafka client config', () => {
  it('reads credentials only from the SECRET_ENV variables', () => {
    expect(readSecrets({})).toEqual({
      clickhouseUser: 'default',
      clickhousePassword: '',
      kafkaSaslUser: undefined,
      kafkaSaslPassword: undefined,
    });
    expect(readSecrets({ LP_CLICKHOUSE_USER: 'w', LP_CLICKHOUSE_PASSWORD: 's3cret' })).toMatchObject({
      clickhouseUser: 'w',
      clickhousePassword: 's3cret',
    });
  });

  it('builds SASL and TLS options, and refuses SASL without credentials', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wc-'));
    const ca = path.join(dir, 'ca.crt');
    fs.writeFileSync(ca, 'PEM');
    const cfg = config({
      kafka: {
        brokers: ['b'],
        topic: 't',
        groupId: 'g',
        clientId: 'c',
        sasl: { mechanism: 'scram-sha-512' },
        tls: { enabled: true, caFile: ca },
      },
    });
    const k = kafkaClientConfig(
      cfg,
      { clickhouseUser: 'x', clickhousePassword: '', kafkaSaslUser: 'u', kafkaSaslPassword: 'p' },
      60_000,
    );
    // The CA is read while the options are built: its directory can go now.
    fs.rmSync(dir, { recursive: true, force: true });
    expect(k.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'u', password: 'p' });
    expect(k.ssl).toEqual({ rejectUnauthorized: true, ca: ['PEM'] });
    expect(k.requestTimeout).toBe(30_000);
    expect(() => kafkaClientConfig(cfg, { clickhouseUser: 'x', clickhousePassword: '' }, 1)).toThrow(
      /LP_KAFKA_SASL_USERNAME/,
    );
    expect(kafkaClientConfig(config(), { clickhouseUser: 'x', clickhousePassword: '' }, 1)).toEqual({
      clientId: 'c',
      brokers: ['b:9092'],
      requestTimeout: 1,
    });
  });
});

describe('applyArgs', () => {
  it('maps --config <path> to LP_CONFIG', () => {
    const env: NodeJS.ProcessEnv = {};
    applyArgs(['--config', '/etc/logpipeline/config.json'], env);
    expect(env.LP_CONFIG).toBe('/etc/logpipeline/config.json');
    const untouched: NodeJS.ProcessEnv = { LP_CONFIG: 'x' };
    applyArgs([], untouched);
    expect(untouched.LP_CONFIG).toBe('x');
  });
});
