/**
 * `npm run env:up` / `npm run env:down`: the test bed for manual use. `up` starts everything
 * detached (it outlives this command) and prints how to reach it; `down` stops it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startTestBed, stopTestBed } from './bed';
import { readTestBed, stateFile } from './testbed';

async function up(): Promise<void> {
  if (fs.existsSync(stateFile())) {
    console.error(`a test bed is already recorded at ${stateFile()}; run 'npm run env:down' first`);
    process.exit(1);
  }
  const dir = path.join(path.dirname(stateFile()), 'bed');
  fs.rmSync(dir, { recursive: true, force: true });
  const bed = await startTestBed({ ownerPid: 0, dir });
  console.log(`
export KUBECONFIG=${bed.kubernetes?.kubeconfig}
Kafka bootstrap:  ${bed.kafka?.bootstrap}   (Kafka ${bed.kafka?.version})
ClickHouse URL:   ${bed.clickhouse?.url}   (user ${bed.clickhouse?.username}, engine ${bed.clickhouse?.version})
Kubernetes:       ${bed.kubernetes?.server}   (kube-apiserver ${bed.kubernetes?.version}, etcd ${bed.kubernetes?.etcdVersion})
State file:       ${stateFile()}
Stop with:        npm run env:down`);
}

async function down(): Promise<void> {
  if (!fs.existsSync(stateFile())) {
    console.log('no test bed running');
    return;
  }
  await stopTestBed(readTestBed());
  fs.rmSync(stateFile());
  console.log('test bed stopped');
}

const cmd = process.argv[2];
(cmd === 'up' ? up() : cmd === 'down' ? down() : Promise.reject(new Error('usage: cli.js up|down'))).catch(
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
