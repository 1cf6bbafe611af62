/**
 * The parent's side of the end-to-end benchmark's peer (bench/e2e-peer.ts): starts the peer
 * process on a pipeline's backlog and measures its CPU from /proc in the window the worker's
 * steady-state figure uses — from the consumer group's first assignment (the backlog is waiting,
 * so consumption starts right then) to the moment the group's committed offsets reach the end of
 * every partition (the engine commits a block after its rows are stored, the worker after its
 * INSERT returned: the last row is visible). Both ends are seen from outside (the Kafka admin API
 * and /proc), so nothing is polled inside the peer while it is measured. The assignment is seen by
 * polling the group every 50 ms, so the peer's window may start a little after its first fetch
 * (in the peer's favour; the worker logs its own join).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { AssignerProtocol, type Admin } from 'kafkajs';
import type { TestBed } from '../test/env/testbed';
import * as s from '../test/worker-support';
import type { PeerArgs, PeerReady, PeerResult } from './e2e-peer';
import { procUsage } from './e2e-process';

/** One measured peer run. */
export interface PeerRun extends PeerResult {
  /** Lines in the topic. */
  lines: number;
  /** Peer CPU (/proc) from the group's first assignment to the last offset committed. */
  steadyCpuSeconds: number;
  steadyWallSeconds: number;
  steadyLinesPerCpuSecond: number;
  /** Lines / the peer's own CPU from creating its tables to the end of the window (includes its group join). */
  linesPerCpuSecond: number;
}

/** True once the group's committed offset reached the end of every partition of `topic`. */
export async function committedEverything(admin: Admin, topic: string, groupId: string): Promise<boolean> {
  const [ends, [committed]] = await Promise.all([
    admin.fetchTopicOffsets(topic),
    admin.fetchOffsets({ groupId, topics: [topic] }),
  ]);
  const at = new Map((committed?.partitions ?? []).map((c) => [c.partition, Number(c.offset)]));
  return ends.every((e) => (at.get(e.partition) ?? -1) >= Number(e.high));
}

/**
 * True once a member of the group holds at least one partition, whatever the group's state: with
 * two consumers the first one consumed through a long PreparingRebalance (its assignment stays
 * listed), and waiting for `Stable` started the window halfway through the backlog.
 */
async function assigned(admin: Admin, groupId: string): Promise<boolean> {
  const { groups } = await admin.describeGroups([groupId]);
  const g = groups[0];
  if (!g) return false;
  return g.members.some((m) => {
    if (m.memberAssignment.length === 0) return false;
    const a = AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
    return a !== null && Object.values(a.assignment).some((partitions) => partitions.length > 0);
  });
}

/** Polls `check` every `everyMs` until it is true; throws after `timeoutMs`. */
async function waitFor(what: string, check: () => Promise<boolean>, everyMs: number, timeoutMs: number) {
  const t0 = Date.now();
  while (!(await check().catch(() => false))) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`peer: no ${what} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Runs the peer on `topic` (holding `lines` lines) with its own group and measures it; `engine`
 * overrides the peer's engine settings (A/B of its configuration).
 */
export async function measurePeer(
  bed: TestBed,
  topic: string,
  groupId: string,
  lines: number,
  timeoutMs = 600_000,
  engine: Pick<PeerArgs, 'consumers' | 'flushIntervalMs'> = {},
): Promise<PeerRun> {
  const args: PeerArgs = { broker: bed.kafka!.bootstrap, topic, group: groupId, lines, timeoutMs, ...engine };
  const child = spawn(process.execPath, [path.join(__dirname, 'e2e-peer.js'), JSON.stringify(args)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const out = readline.createInterface({ input: child.stdout });
  const next = lineReader(out);
  const admin = s.kafkaClient(bed).admin();
  await admin.connect();
  try {
    const ready = JSON.parse(await next()) as PeerReady & { error?: string };
    if (!ready.ready) throw new Error(`peer failed: ${ready.error ?? 'no ready line'}`);
    const pid = child.pid ?? 0;
    await waitFor('assignment', () => assigned(admin, groupId), 50, timeoutMs);
    const join = procUsage(pid);
    const tJoin = Date.now();
    // The worker's completion is polled the same way (bench/e2e.ts).
    await waitFor('complete commit', () => committedEverything(admin, topic, groupId), 200, timeoutMs);
    const end = procUsage(pid);
    const steadyWallSeconds = (Date.now() - tJoin) / 1000;
    child.stdin.end('stored\n');
    const r = JSON.parse(await next()) as PeerResult & { error?: string };
    if (r.error) throw new Error(`peer failed: ${r.error}`);
    const steadyCpuSeconds = Math.max(1e-3, end.user + end.system - join.user - join.system);
    return {
      ...r,
      lines,
      steadyCpuSeconds,
      steadyWallSeconds,
      steadyLinesPerCpuSecond: lines / steadyCpuSeconds,
      linesPerCpuSecond: lines / r.cpuSeconds,
    };
  } finally {
    await admin.disconnect();
    if (child.exitCode === null) child.kill();
  }
}

/** Reads one line at a time from `rl` (rejects when the stream ends first). */
function lineReader(rl: readline.Interface): () => Promise<string> {
  const lines: string[] = [];
  const waiters: Array<{ resolve: (l: string) => void; reject: (e: Error) => void }> = [];
  let closed = false;
  rl.on('line', (l) => {
    const w = waiters.shift();
    if (w) w.resolve(l);
    else lines.push(l);
  });
  rl.on('close', () => {
    closed = true;
    for (const w of waiters.splice(0)) w.reject(new Error('peer exited without a result'));
  });
  return () =>
    lines.length > 0
      ? Promise.resolve(lines.shift()!)
      : closed
        ? Promise.reject(new Error('peer exited without a result'))
        : new Promise((resolve, reject) => waiters.push({ resolve, reject }));
}
