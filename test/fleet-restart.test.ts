/**
 * Cold start (issue 18): an operator restarted over Ready pipelines sends no SSA patch, status
 * write or Event, runs no DDL and changes no topic (no CreateTopics, no owner-record commit): the
 * children carry the hash of what was applied, topic owner records carry their date, and the
 * status is unchanged. Counted where the writes land (apiserver audit log, DDL and Kafka counters).
 */
import type { Manager } from '../operator/src/controller/manager';
import { registerExternalParts, type ExternalClients } from '../operator/src/controller/parts';
import {
  auditMark,
  createReadyFleet,
  externalWrites,
  reconcilesPast,
  writesDelta,
  writesSince,
} from './fleet-support';
import { createNamespace, deleteNamespace, startManager } from './operator-harness';

jest.setTimeout(300_000);

const PIPELINES = 6;
let namespace: string;
let manager: Manager | undefined;
let external: ExternalClients | undefined;

beforeAll(async () => {
  namespace = await createNamespace('fleet-restart');
});

afterAll(async () => {
  await manager?.stop();
  await external?.close();
  await deleteNamespace(namespace);
});

it('a restarted operator writes nothing for Ready pipelines', async () => {
  manager = startManager(namespace, { resyncMs: 2_000 });
  external = registerExternalParts(manager);
  const created = auditMark();
  await createReadyFleet(namespace, 'rs', PIPELINES);
  // The audit log sees the operator's writes (else the zero below would prove nothing).
  const creation = writesSince(created, namespace);
  expect(creation.filter((w) => w.resource === 'configmaps' && w.verb === 'patch')).toHaveLength(PIPELINES);
  expect(creation.some((w) => w.resource === 'logpipelines' && w.subresource === 'status')).toBe(true);
  await reconcilesPast(manager, manager.reconcileCount, PIPELINES);
  await manager.stop();
  await external.close();

  const mark = auditMark();
  const before = externalWrites();
  manager = startManager(namespace, { resyncMs: 2_000 });
  external = registerExternalParts(manager);
  // Every pipeline reconciled at least twice by the new instance (the first pass and a resync).
  await reconcilesPast(manager, 0, 2 * PIPELINES);
  expect(writesSince(mark, namespace)).toEqual([]);
  expect(writesDelta(before, externalWrites())).toEqual({});
});
