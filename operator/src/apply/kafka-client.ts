/**
 * Kafka admin clients for the operator. One connected admin per distinct cluster identity
 * (bootstrap list + TLS + SASL credentials) is cached and shared by every pipeline that uses it, so
 * a thousand pipelines on one Kafka cost one client. Secret values arrive as arguments, are only
 * hashed into the cache key (never stored in it) and are never logged.
 */
import type { SaslMechanism } from '../../../common/src/worker-config';
import { createHash } from 'node:crypto';
import { Kafka, logLevel, type Admin, type KafkaConfig, type logCreator, type SASLOptions } from 'kafkajs';
import { registerKafkaCodecs } from '../../../common/src/kafka/codecs';
import { countKafkaRequest } from './request-counts';
import { attributingSocketFactory } from './kafka-attribution';
import { backendLimits, InFlightLimiter } from './in-flight';
import type { ResolvedSpec } from '../api/defaults';

/** Secret values the pipeline's Secrets hold (read by the caller). */
export interface KafkaSecretValues {
  saslUsername?: string;
  saslPassword?: string;
  /** PEM CA bundle for TLS. */
  caPem?: string;
}

/** Everything needed to connect, with secret values filled in. */
export interface KafkaConnection {
  brokers: string[];
  sasl?: { mechanism: SaslMechanism; username: string; password: string };
  tls?: { ca?: string; insecureSkipVerify: boolean };
}

/** A failure talking to Kafka that is worth a retry; `reason` is a one-word CamelCase condition reason. */
export class KafkaApplyError extends Error {
  constructor(
    readonly reason: 'KafkaUnreachable' | 'KafkaSecretMissing' | 'KafkaError',
    message: string,
    /** The broker's error type behind it (kafkajs's `type`, e.g. UNKNOWN_TOPIC_OR_PARTITION), when known. */
    readonly type?: string,
  ) {
    super(message);
    this.name = 'KafkaApplyError';
  }
}

/** Combines the resolved kafka spec with secret values; throws KafkaApplyError when SASL values are missing. */
export function kafkaConnection(kafka: ResolvedSpec['kafka'], secrets: KafkaSecretValues): KafkaConnection {
  const conn: KafkaConnection = { brokers: [...kafka.bootstrapServers] };
  if (kafka.sasl) {
    if (!secrets.saslUsername || !secrets.saslPassword) {
      throw new KafkaApplyError(
        'KafkaSecretMissing',
        `Secret ${kafka.sasl.secretName} lacks ${kafka.sasl.usernameKey}/${kafka.sasl.passwordKey}`,
      );
    }
    conn.sasl = {
      mechanism: kafka.sasl.mechanism,
      username: secrets.saslUsername,
      password: secrets.saslPassword,
    };
  }
  if (kafka.tls?.enabled) conn.tls = { ca: secrets.caPem, insecureSkipVerify: kafka.tls.insecureSkipVerify };
  return conn;
}

/** True when both connections name the same brokers (in order) and credentials. */
export function sameKafkaConnection(a: KafkaConnection, b: KafkaConnection): boolean {
  return (
    a.brokers.length === b.brokers.length &&
    a.brokers.every((x, i) => x === b.brokers[i]) &&
    a.sasl?.mechanism === b.sasl?.mechanism &&
    a.sasl?.username === b.sasl?.username &&
    a.sasl?.password === b.sasl?.password &&
    !!a.tls === !!b.tls &&
    a.tls?.ca === b.tls?.ca &&
    a.tls?.insecureSkipVerify === b.tls?.insecureSkipVerify
  );
}

/** Cache key of a connection: same brokers (any order) and same credentials share one client. */
export function kafkaConnectionKey(conn: KafkaConnection): string {
  // Asked several times per connection object (autoscaler poll, observer, pools): hash it once.
  const known = connectionKeys.get(conn);
  if (known) return known;
  const h = createHash('sha256');
  h.update(
    JSON.stringify([
      [...conn.brokers].sort(),
      conn.sasl?.mechanism,
      conn.sasl?.username,
      conn.sasl?.password,
      conn.tls?.ca,
      conn.tls?.insecureSkipVerify,
      !!conn.tls,
    ]),
  );
  const key = h.digest('hex');
  connectionKeys.set(conn, key);
  return key;
}

/** Keys by connection object (connections are built per use and not changed afterwards). */
const connectionKeys = new WeakMap<KafkaConnection, string>();

/** Timeouts and retries of admin clients: short, so an unreachable broker fails a reconcile in seconds. */
export interface KafkaAdminOptions {
  clientId?: string;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
  retries?: number;
  /** kafkajs log sink; default silent (outcomes and thrown errors carry the messages). */
  logCreator?: logCreator;
}

/** The kafkajs configuration for a connection. */
export function buildKafkaConfig(conn: KafkaConnection, opts: KafkaAdminOptions = {}): KafkaConfig {
  // Every client built from this config gets the fixed request-queue timer (no negative timeout).
  registerKafkaCodecs();
  const config: KafkaConfig = {
    clientId: opts.clientId ?? 'logpipeline-operator',
    brokers: conn.brokers,
    connectionTimeout: opts.connectionTimeoutMs ?? 3_000,
    requestTimeout: opts.requestTimeoutMs ?? 15_000,
    retry: { retries: opts.retries ?? 3, initialRetryTime: 200, maxRetryTime: 2_000 },
    logLevel: opts.logCreator ? logLevel.WARN : logLevel.NOTHING,
    logCreator: opts.logCreator,
  };
  if (conn.sasl) config.sasl = { ...conn.sasl } as SASLOptions;
  if (conn.tls)
    config.ssl = {
      ca: conn.tls.ca ? [conn.tls.ca] : undefined,
      rejectUnauthorized: !conn.tls.insecureSkipVerify,
    };
  return config;
}

/** Shared, lazily connected admin clients keyed by kafkaConnectionKey. */
export class KafkaAdminPool {
  private readonly admins = new Map<string, Promise<Admin>>();
  /** Admin operations in flight per cluster (apply/in-flight.ts). */
  private readonly inFlight = new InFlightLimiter(() => backendLimits().kafkaAdmin);

  /** Registers every Kafka codec: an admin may read records (offsets, samples) of any compression. */
  constructor(private readonly opts: KafkaAdminOptions = {}) {
    registerKafkaCodecs();
  }

  /** Number of cached clients. */
  get size(): number {
    return this.admins.size;
  }

  /** The connected admin for `conn`, created on first use; throws KafkaApplyError when it cannot connect. */
  admin(conn: KafkaConnection): Promise<Admin> {
    const key = kafkaConnectionKey(conn);
    let admin = this.admins.get(key);
    if (!admin) {
      const config = { ...buildKafkaConfig(conn, this.opts), socketFactory: attributingSocketFactory };
      const created = new Kafka(config).admin();
      // Counted process-wide here; per reconcile at send time (kafka-attribution.ts).
      created.on(created.events.REQUEST, (e) => countKafkaRequest(e.payload.apiName, 1, false));
      admin = created.connect().then(
        () => created,
        (err: unknown) => {
          this.admins.delete(key);
          throw new KafkaApplyError(
            'KafkaUnreachable',
            `cannot connect to Kafka ${conn.brokers.join(',')}: ${errorMessage(err)}`,
          );
        },
      );
      this.admins.set(key, admin);
    }
    return admin;
  }

  /** Runs `fn` with the shared admin; a connection-level failure evicts the client so the next call reconnects. */
  async withAdmin<T>(conn: KafkaConnection, fn: (admin: Admin) => Promise<T>): Promise<T> {
    const admin = await this.admin(conn);
    try {
      return await this.inFlight.run(kafkaConnectionKey(conn), () => fn(admin));
    } catch (err) {
      if (err instanceof KafkaApplyError && err.reason === 'KafkaUnreachable') await this.evict(conn);
      throw err;
    }
  }

  /** Disconnects and forgets the client of `conn`. */
  async evict(conn: KafkaConnection): Promise<void> {
    await this.dropOne(kafkaConnectionKey(conn));
  }

  /** Disconnects every client whose key is not in `inUse` (call after a resync of all pipelines). */
  async retain(inUse: Iterable<string>): Promise<void> {
    const keep = new Set(inUse);
    await Promise.all([...this.admins.keys()].filter((k) => !keep.has(k)).map((k) => this.dropOne(k)));
  }

  /** Disconnects every client. */
  async close(): Promise<void> {
    await Promise.all([...this.admins.keys()].map((k) => this.dropOne(k)));
  }

  /** Disconnects and forgets the clients of these connection keys (KafkaClientPool). */
  async drop(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((k) => this.dropOne(k)));
  }

  private async dropOne(key: string): Promise<void> {
    const admin = this.admins.get(key);
    this.admins.delete(key);
    if (!admin) return;
    await admin.then((a) => a.disconnect()).catch(() => undefined);
  }
}

/** The message of an unknown error value. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
