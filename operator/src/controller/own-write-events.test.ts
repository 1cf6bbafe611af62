import { OwnWriteEvents } from './own-write-events';

describe('OwnWriteEvents', () => {
  it('judges events of a running reconcile when it ends', () => {
    const e = new OwnWriteEvents();
    expect(e.defer('ns/a', () => true)).toBe(false);
    e.begin('ns/a');
    let stored = '';
    // The event of our write arrives before the write's answer is read.
    expect(e.defer('ns/a', () => stored === '7')).toBe(true);
    stored = '7';
    expect(e.end('ns/a')).toBe(false);
    expect(e.droppedAfterReconcile).toBe(1);
    // After the end, events are judged by the caller again.
    expect(e.defer('ns/a', () => true)).toBe(false);
  });

  it('queues again when any event of the running reconcile was someone else', () => {
    const e = new OwnWriteEvents();
    e.begin('ns/a');
    e.begin('ns/b');
    e.defer('ns/a', () => true);
    e.defer('ns/a', () => false);
    e.defer('ns/b', () => true);
    expect(e.end('ns/a')).toBe(true);
    expect(e.end('ns/b')).toBe(false);
  });
});
