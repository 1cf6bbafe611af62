import type { Engine, EngineConnection } from './engine';
import { SessionRegistry } from './sessions';

function registry(): { sessions: SessionRegistry; opened: EngineConnection[] } {
  const opened: EngineConnection[] = [];
  const engine = {
    connect: () => {
      const conn = { close: jest.fn() } as unknown as EngineConnection;
      opened.push(conn);
      return conn;
    },
  } as unknown as Engine;
  return { sessions: new SessionRegistry(engine), opened };
}

describe('SessionRegistry', () => {
  it('hands a busy session to the next request when the current one releases it', async () => {
    const { sessions, opened } = registry();
    const first = await sessions.acquire('s', undefined, false);
    let secondGot: EngineConnection | undefined;
    const second = sessions.acquire('s', undefined, false).then((c) => (secondGot = c));
    await Promise.resolve();
    expect(secondGot).toBeUndefined(); // still waiting: the first request holds it
    sessions.release('s', false);
    expect(await second).toBe(first);
    expect(opened).toHaveLength(1);
    sessions.release('s', false);
    sessions.closeAll();
    expect(first.close).toHaveBeenCalledTimes(1);
  });

  it('answers SESSION_IS_LOCKED when the session stays busy past the wait', async () => {
    const { sessions } = registry();
    await sessions.acquire('s', undefined, false);
    await expect(sessions.acquire('s', undefined, false, 20)).rejects.toMatchObject({
      type: 'SESSION_IS_LOCKED',
    });
    sessions.release('s', false); // no waiter left behind: the session becomes idle
    await expect(sessions.acquire('s', undefined, false, 0)).resolves.toBeDefined();
    sessions.release('s', true);
  });

  it('closes a session asked to close once its waiters are done', async () => {
    const { sessions, opened } = registry();
    await sessions.acquire('s', undefined, false);
    const waiting = sessions.acquire('s', undefined, false);
    sessions.release('s', true);
    await waiting;
    expect(opened[0].close).not.toHaveBeenCalled();
    sessions.release('s', false);
    expect(opened[0].close).toHaveBeenCalledTimes(1);
    await expect(sessions.acquire('s', undefined, true)).rejects.toMatchObject({ type: 'SESSION_NOT_FOUND' });
  });
});
