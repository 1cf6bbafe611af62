/**
 * Helpers of the fleet tests: N real pipelines (Kafka topic, ClickHouse tables) made Ready, and
 * counters of what the operator writes, taken where the writes land: the bed apiserver's audit log
 * (every create/update/patch/delete), the ClickHouse DDL counter and the Kafka write counter of
 * this process (the operator runs in-process).
 */
import fs from 'node:fs';
import { clickhouseStatementCounts } from '../operator/src/apply/clickhouse-client';
import { kafkaWriteCounts } from '../operator/src/apply/kafka-writes';
import type { Manager } from '../operator/src/controller/manager';
import { auditLogPath } from './env/kubernetes';
import { readTestBed } from './env/testbed';
import {
  apis,
  condition,
  createPipeline,
  createSecret,
  getPipeline,
  pipeline,
  setDeploymentStatus,
  waitFor,
} from './operator-harness';

const bed = readTestBed();

/** One write request as the apiserver audited it. */
export interface AuditedWrite {
  verb: string;
  resource: string;
  subresource?: string;
  name?: string;
  userAgent?: string;
}

/** Position in the audit log; writes after it are read by `writesSince`. */
export function auditMark(): number {
  const file = auditLogPath(bed.kubernetes!);
  return fs.existsSync(file) ? fs.statSync(file).size : 0;
}

/** Writes in `namespace` audited after `mark` (the Deployment status the test itself sets excluded). */
export function writesSince(mark: number, namespace: string): AuditedWrite[] {
  const file = auditLogPath(bed.kubernetes!);
  const text = fs.readFileSync(file).subarray(mark).toString('utf8');
  const out: AuditedWrite[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const e = JSON.parse(line) as {
      verb: string;
      userAgent?: string;
      objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
    };
    const ref = e.objectRef ?? {};
    if (ref.namespace !== namespace) continue;
    out.push({
      verb: e.verb,
      resource: ref.resource ?? '',
      subresource: ref.subresource,
      name: ref.name,
      userAgent: e.userAgent,
    });
  }
  return out;
}

/** Everything this process sent to ClickHouse (DDL by kind) and Kafka (writes by API), summed. */
export function externalWrites(): { ddl: number; kafka: number; detail: Record<string, number> } {
  const detail: Record<string, number> = {};
  let ddl = 0;
  let kafka = 0;
  for (const [k, n] of clickhouseStatementCounts()) {
    detail[`clickhouse ${k}`] = n;
    ddl += n;
  }
  for (const [k, n] of kafkaWriteCounts()) {
    detail[`kafka ${k}`] = n;
    kafka += n;
  }
  return { ddl, kafka, detail };
}

/** The difference of two `externalWrites()` readings, by key (zero keys left out). */
export function writesDelta(
  before: ReturnType<typeof externalWrites>,
  after: ReturnType<typeof externalWrites>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries(after.detail)) {
    const d = n - (before.detail[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

/** Creates `count` pipelines on the bed's Kafka and ClickHouse and makes them Ready (worker status by hand). */
export async function createReadyFleet(
  namespace: string,
  prefix: string,
  count: number,
  workers: (i: number) => object = () => ({ replicas: 1 }),
): Promise<string[]> {
  await createSecret(namespace, 'ch', {
    username: bed.clickhouse!.username,
    password: bed.clickhouse!.password,
  });
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (const [i, name] of names.entries()) {
    await createPipeline({
      ...pipeline(namespace, name),
      spec: {
        kafka: {
          bootstrapServers: [bed.kafka!.bootstrap],
          topic: { name: `${namespace}.${name}`, partitions: 1 },
        },
        clickhouse: {
          url: bed.clickhouse!.url,
          credentialsSecretRef: { name: 'ch' },
          database: namespace.replace(/-/g, '_'),
          table: name.replace(/-/g, '_'),
        },
        workers: workers(i),
      } as never,
    });
  }
  for (const name of names) {
    const dep = await waitFor(
      `Deployment of ${name}`,
      async () => {
        try {
          return await apis().apps.readNamespacedDeployment({ namespace, name: `${name}-worker` });
        } catch {
          return undefined;
        }
      },
      120_000,
    );
    await setDeploymentStatus(namespace, `${name}-worker`, {
      observedGeneration: dep.metadata!.generation,
      replicas: 1,
      updatedReplicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
    });
  }
  for (const name of names) {
    await waitFor(
      `${name} Ready`,
      async () => condition(await getPipeline(namespace, name), 'Ready')?.status === 'True',
      120_000,
    );
  }
  return names;
}

/** Waits until `manager` has run `n` more reconciles than `from` (a full round of every pipeline). */
export async function reconcilesPast(manager: Manager, from: number, n: number): Promise<number> {
  return waitFor(
    `${n} reconciles`,
    async () => manager.reconcileCount >= from + n && manager.reconcileCount,
    120_000,
  );
}
