/**
 * The worker's last word to Kubernetes. A worker that exits on a fatal error writes the reason to
 * its container's termination-message file; the kubelet copies it into the pod's
 * `lastState.terminated.message`, where the operator reads it and names it in the LogPipeline's
 * WorkersReady condition and an Event (`kubectl describe lp` says why, not only "0 of 1 ready").
 * The Deployment sets `terminationMessagePolicy: FallbackToLogsOnError`, so a crash that could not
 * write the file (an out-of-memory kill) still shows the tail of the log.
 */
import fs from 'node:fs';

/** Kubernetes' default `terminationMessagePath`. */
export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log';
/** Env override of the path (local runs: the pod runner points it into the pod's directory). */
export const TERMINATION_MESSAGE_PATH_ENV = 'LP_TERMINATION_MESSAGE_PATH';
/** The kubelet keeps at most 4096 bytes; one readable line is what a condition message needs. */
const MAX_CHARS = 1024;

/** Where to write the termination message. */
export function terminationMessagePath(env: NodeJS.ProcessEnv = process.env): string {
  return env[TERMINATION_MESSAGE_PATH_ENV] || DEFAULT_TERMINATION_MESSAGE_PATH;
}

/** "Name: message" of an error (and its cause), on one line, at most 1024 characters. */
export function terminationMessage(err: unknown): string {
  const describe = (e: unknown): string => {
    if (!(e instanceof Error)) return String(e);
    const name = e.name && e.name !== 'Error' ? `${e.name}: ` : '';
    return `${name}${e.message}`;
  };
  let text = describe(err);
  const cause = err instanceof Error ? (err as { cause?: unknown }).cause : undefined;
  if (cause !== undefined && !text.includes(describe(cause))) text += ` (cause: ${describe(cause)})`;
  const oneLine = text.replace(/\s+/g, ' ').trim() || 'worker exited on an unknown error';
  return oneLine.length > MAX_CHARS ? `${oneLine.slice(0, MAX_CHARS - 1)}…` : oneLine;
}

/** Writes the termination message; false when the file cannot be written (e.g. off-cluster). */
export function writeTerminationMessage(err: unknown, env: NodeJS.ProcessEnv = process.env): boolean {
  try {
    fs.writeFileSync(terminationMessagePath(env), `${terminationMessage(err)}\n`);
    return true;
  } catch {
    return false;
  }
}

/** Something that may stop for good (the Worker: its Kafka consumer crashed without a restart). */
export interface FatalSource {
  fatalError(): unknown;
}

/**
 * Calls `onFatal` once `source` reports a fatal error, checking every `intervalMs`; the timer does
 * not keep the process alive. Returns a function that stops watching.
 */
export function watchFatal(
  source: FatalSource,
  onFatal: (err: unknown) => void,
  intervalMs = 500,
): () => void {
  const timer = setInterval(() => {
    const err = source.fatalError();
    if (err === undefined) return;
    clearInterval(timer);
    onFatal(err);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
