import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  DEFAULT_TERMINATION_MESSAGE_PATH,
  terminationMessage,
  terminationMessagePath,
  watchFatal,
  writeTerminationMessage,
} from './termination';

class NamedError extends Error {
  constructor(name: string, message: string, cause?: unknown) {
    super(message, { cause });
    this.name = name;
  }
}

describe('termination message', () => {
  test('names the error class and keeps one line', () => {
    const err = new NamedError('KafkaJSNotImplemented', 'Snappy compression\nnot implemented');
    expect(terminationMessage(err)).toBe('KafkaJSNotImplemented: Snappy compression not implemented');
    expect(terminationMessage(new Error('plain'))).toBe('plain');
    expect(terminationMessage('a string')).toBe('a string');
  });

  test('appends a cause the message does not already contain', () => {
    const err = new NamedError('KafkaJSNonRetriableError', 'consumer crashed', new NamedError('X', 'root'));
    expect(terminationMessage(err)).toBe('KafkaJSNonRetriableError: consumer crashed (cause: X: root)');
  });

  test('is capped at 1024 characters', () => {
    const msg = terminationMessage(new Error('x'.repeat(5000)));
    expect(msg).toHaveLength(1024);
    expect(msg.endsWith('…')).toBe(true);
  });

  test('path defaults to Kubernetes and is overridable by env', () => {
    expect(terminationMessagePath({})).toBe(DEFAULT_TERMINATION_MESSAGE_PATH);
    expect(terminationMessagePath({ LP_TERMINATION_MESSAGE_PATH: '/x/y' })).toBe('/x/y');
  });

  test('writes the file, and reports false instead of throwing when it cannot', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'term-'));
    const file = path.join(dir, 'termination-log');
    expect(writeTerminationMessage(new Error('boom'), { LP_TERMINATION_MESSAGE_PATH: file })).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe('boom\n');
    const missing = path.join(dir, 'no', 'such', 'dir', 'file');
    expect(writeTerminationMessage(new Error('boom'), { LP_TERMINATION_MESSAGE_PATH: missing })).toBe(false);
    fs.rmSync(dir, { recursive: true });
  });

  test('watchFatal calls back once when the source reports an error', async () => {
    const source = { error: undefined as unknown, checks: 0 };
    const seen: unknown[] = [];
    const fatalError = () => {
      source.checks++;
      return source.error;
    };
    watchFatal({ fatalError }, (e) => seen.push(e), 5);
    while (source.checks < 3) await new Promise((r) => setTimeout(r, 5));
    expect(seen).toEqual([]);
    source.error = new Error('stopped');
    while (seen.length === 0) await new Promise((r) => setTimeout(r, 5));
    const checks = source.checks;
    await new Promise((r) => setTimeout(r, 30));
    expect(seen).toEqual([source.error]);
    expect(source.checks).toBe(checks); // stopped watching
  });
});
