import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  NO_ROOM_MESSAGE,
  noteReadiness,
  podStatus,
  probedReadiness,
  readTerminationMessage,
  restartDelayMs,
  terminationReason,
  unscheduledPodStatus,
  type ContainerRecord,
} from './pod-status';

describe('kubelet-like pod status', () => {
  test('back-off: first restart at once, then base doubling up to the cap', () => {
    const b = { baseMs: 10_000, capMs: 300_000 };
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((n) => restartDelayMs(n, b))).toEqual([
      0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000,
    ]);
  });

  test('termination reasons', () => {
    expect(terminationReason(0, null, false)).toBe('Completed');
    expect(terminationReason(1, null, false)).toBe('Error');
    expect(terminationReason(137, 'SIGKILL', true)).toBe('OOMKilled');
  });

  test('message from the file, else the log tail for FallbackToLogsOnError failures', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pod-status-'));
    const msg = path.join(dir, 'termination-log');
    const log = path.join(dir, 'worker.log');
    fs.writeFileSync(log, Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n'));
    fs.writeFileSync(msg, 'RangeError: bad key\n');
    expect(readTerminationMessage(msg, log, 'FallbackToLogsOnError', true)).toBe('RangeError: bad key');
    fs.writeFileSync(msg, '');
    const tail = readTerminationMessage(msg, log, 'FallbackToLogsOnError', true)!;
    expect(tail.endsWith('line 199')).toBe(true);
    expect(tail.split('\n').length).toBeLessThanOrEqual(80);
    expect(readTerminationMessage(msg, log, 'File', true)).toBeUndefined();
    expect(readTerminationMessage(msg, log, 'FallbackToLogsOnError', false)).toBeUndefined();
    fs.rmSync(dir, { recursive: true });
  });

  test('a container in back-off is waiting in CrashLoopBackOff with its last termination', () => {
    const status = podStatus(
      'w-1',
      {
        name: 'worker',
        image: 'img',
        restartCount: 2,
        restartAt: 20_000,
        ready: false,
        lastTerminated: {
          exitCode: 1,
          reason: 'Error',
          message: 'boom',
          startedAt: '2026-01-01T00:00:00Z',
          finishedAt: '2026-01-01T00:00:01Z',
        },
      },
      '2026-01-01T00:00:00Z',
      10_000,
    );
    const cs = status.containerStatuses[0];
    expect(cs).toMatchObject({ ready: false, restartCount: 2, started: false });
    expect(cs.state).toEqual({
      waiting: {
        reason: 'CrashLoopBackOff',
        message: 'back-off 10s restarting failed container=worker pod=w-1',
      },
    });
    expect(cs.lastState).toMatchObject({ terminated: { exitCode: 1, reason: 'Error', message: 'boom' } });
    expect(status.conditions.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
    });
  });
});

describe('kubelet-like readiness times and scheduling', () => {
  test("Ready's lastTransitionTime moves only on a flip, and a never-ready pod keeps its first one", () => {
    const c = {
      name: 'worker',
      image: 'img',
      restartCount: 0,
      ready: false,
      startedAt: '2026-01-01T00:00:05Z',
    };
    noteReadiness(c, Date.parse('2026-01-01T00:00:06Z'));
    const ready = (s: ReturnType<typeof podStatus>) => s.conditions.find((x) => x.type === 'Ready')!;
    expect(ready(podStatus('w', c, '2026-01-01T00:00:00Z', 0)).lastTransitionTime).toEqual(
      new Date('2026-01-01T00:00:00Z'),
    );
    c.ready = true;
    noteReadiness(c, Date.parse('2026-01-01T00:00:09Z'));
    noteReadiness(c, Date.parse('2026-01-01T00:00:12Z'));
    expect(ready(podStatus('w', c, '2026-01-01T00:00:00Z', 0))).toMatchObject({
      status: 'True',
      lastTransitionTime: new Date('2026-01-01T00:00:09Z'),
    });
    c.ready = false;
    noteReadiness(c, Date.parse('2026-01-01T00:00:30Z'));
    expect(ready(podStatus('w', c, '2026-01-01T00:00:00Z', 0))).toMatchObject({
      status: 'False',
      lastTransitionTime: new Date('2026-01-01T00:00:30Z'),
    });
  });

  test('a pod without room is Pending and Unschedulable, with no container status', () => {
    expect(unscheduledPodStatus('2026-01-01T00:00:00Z')).toEqual({
      phase: 'Pending',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: NO_ROOM_MESSAGE,
          lastTransitionTime: new Date('2026-01-01T00:00:00Z'),
        },
      ],
    });
  });
});

describe('probedReadiness (the kubelet failureThreshold)', () => {
  const timing = { periodSeconds: 5, failureThreshold: 3 };
  const container = (ready: boolean): ContainerRecord => ({
    name: 'worker',
    image: 'w',
    restartCount: 0,
    ready,
  });

  it('makes a container ready on its first success', () => {
    const c = container(false);
    probedReadiness(c, true, 0, timing);
    expect(c.ready).toBe(true);
  });

  it('keeps a ready container ready through failures shorter than (failureThreshold - 1) periods', () => {
    const c = container(true);
    probedReadiness(c, false, 1_000, timing);
    probedReadiness(c, false, 10_999, timing);
    expect(c.ready).toBe(true);
    // A success forgets the failures.
    probedReadiness(c, true, 11_500, timing);
    probedReadiness(c, false, 12_000, timing);
    probedReadiness(c, false, 21_999, timing);
    expect(c.ready).toBe(true);
    probedReadiness(c, false, 22_000, timing);
    expect(c.ready).toBe(false);
  });

  it('leaves a container that never was ready unready, with the kubelet defaults when no probe is given', () => {
    const c = container(false);
    probedReadiness(c, false, 0);
    expect(c.ready).toBe(false);
    const d = container(true);
    probedReadiness(d, false, 0);
    probedReadiness(d, false, 19_999);
    expect(d.ready).toBe(true);
    probedReadiness(d, false, 20_000);
    expect(d.ready).toBe(false);
  });
});
