import { resolveSpec } from '../api/defaults';
import { pipeline } from '../../../test/fixtures/clickhouse-testing';
import { buildKafkaConfig, kafkaConnection, kafkaConnectionKey, KafkaApplyError } from './kafka-client';

function kafkaSpec(extra: Record<string, unknown> = {}) {
  const lp = pipeline();
  lp.spec.kafka = { ...lp.spec.kafka, bootstrapServers: ['b1:9092', 'b2:9092'], ...extra };
  return resolveSpec(lp).kafka;
}

const sasl = { sasl: { mechanism: 'scram-sha-512', secretRef: { name: 'kafka-user' } } };

describe('kafkaConnection', () => {
  it('fills SASL and TLS from secret values', () => {
    const conn = kafkaConnection(
      kafkaSpec({ ...sasl, tls: { enabled: true, caSecretRef: { name: 'ca', key: 'ca.crt' } } }),
      {
        saslUsername: 'u',
        saslPassword: 'p',
        caPem: 'PEM',
      },
    );
    expect(conn).toEqual({
      brokers: ['b1:9092', 'b2:9092'],
      sasl: { mechanism: 'scram-sha-512', username: 'u', password: 'p' },
      tls: { ca: 'PEM', insecureSkipVerify: false },
    });
  });

  it('refuses SASL without both secret values, naming keys but no values', () => {
    const err = (() => {
      try {
        kafkaConnection(kafkaSpec(sasl), { saslUsername: 'u' });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(KafkaApplyError);
    expect(err).toMatchObject({
      reason: 'KafkaSecretMissing',
      message: 'Secret kafka-user lacks username/password',
    });
  });
});

describe('kafkaConnectionKey', () => {
  const base = { brokers: ['b1:9092', 'b2:9092'] };
  it('ignores broker order and differs per credential', () => {
    expect(kafkaConnectionKey(base)).toBe(kafkaConnectionKey({ brokers: ['b2:9092', 'b1:9092'] }));
    const a = kafkaConnectionKey({ ...base, sasl: { mechanism: 'plain', username: 'u', password: 'p1' } });
    const b = kafkaConnectionKey({ ...base, sasl: { mechanism: 'plain', username: 'u', password: 'p2' } });
    expect(a).not.toBe(b);
    expect(a).not.toBe(kafkaConnectionKey(base));
    expect(kafkaConnectionKey({ ...base, tls: { insecureSkipVerify: false } })).not.toBe(
      kafkaConnectionKey(base),
    );
  });

  it('is a hash that does not contain the password', () => {
    const key = kafkaConnectionKey({
      ...base,
      sasl: { mechanism: 'plain', username: 'u', password: 'hunter2-secret' },
    });
    expect(key).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('buildKafkaConfig', () => {
  it('maps SASL, TLS and short timeouts', () => {
    const config = buildKafkaConfig(
      {
        brokers: ['b1:9092'],
        sasl: { mechanism: 'plain', username: 'u', password: 'p' },
        tls: { ca: 'PEM', insecureSkipVerify: true },
      },
      { clientId: 'op' },
    );
    expect(config).toMatchObject({
      clientId: 'op',
      brokers: ['b1:9092'],
      connectionTimeout: 3000,
      sasl: { mechanism: 'plain', username: 'u', password: 'p' },
      ssl: { ca: ['PEM'], rejectUnauthorized: false },
      retry: { retries: 3 },
    });
    expect(buildKafkaConfig({ brokers: ['b1:9092'] }).ssl).toBeUndefined();
  });
});
