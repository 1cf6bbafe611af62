/** The shared Kafka observers of the operator: one per cluster identity (kafka-observer.ts). */
import { kafkaConnectionKey, type KafkaConnection } from '../apply/kafka-client';
import { KafkaClusterObserver, type KafkaObserverOptions } from './kafka-observer';

/** One observer per Kafka cluster identity (the admin pool's key: brokers, TLS, SASL). */
export class KafkaObservers {
  private readonly observers = new Map<string, KafkaClusterObserver>();
  constructor(private readonly opts: KafkaObserverOptions = {}) {}

  for(conn: KafkaConnection): KafkaClusterObserver {
    const key = kafkaConnectionKey(conn);
    let o = this.observers.get(key);
    if (!o) {
      o = new KafkaClusterObserver(conn, this.opts);
      this.observers.set(key, o);
    }
    return o;
  }

  /** Rounds run by all observers. */
  rounds(): number {
    let n = 0;
    for (const o of this.observers.values()) n += o.rounds;
    return n;
  }

  /** True while no observer has a round running or gathered. */
  idle(): boolean {
    for (const o of this.observers.values()) if (!o.idle) return false;
    return true;
  }

  /** Disconnects and forgets the observers of these connection keys (KafkaClientPool). */
  async drop(keys: readonly string[]): Promise<void> {
    const gone = keys.flatMap((k) => {
      const o = this.observers.get(k);
      this.observers.delete(k);
      return o ? [o] : [];
    });
    await Promise.all(gone.map((o) => o.close()));
  }

  /** Observers held (tests). */
  get size(): number {
    return this.observers.size;
  }

  /** Disconnects every observer. */
  async close(): Promise<void> {
    await Promise.all([...this.observers.values()].map((o) => o.close()));
    this.observers.clear();
  }
}
