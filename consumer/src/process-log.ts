/**
 * The logger both entry points of the worker image (worker and syslog receiver) start with: JSON
 * lines at LP_LOG_LEVEL, tagged with the component and pipeline, and a last word for errors nobody
 * caught (logged, written to the termination message so `kubectl describe` says why, then exit).
 */
import { createLogger, type LogLevel, type Logger } from '../../common/src/log';
import { errorReason } from './sink/retry';
import { writeTerminationMessage } from './termination';

/** Creates the process logger and installs the uncaught-exception and unhandled-rejection handlers. */
export function startProcessLog(component: string, pipeline: { namespace: string; name: string }): Logger {
  const log = createLogger({
    level: (process.env.LP_LOG_LEVEL as LogLevel | undefined) ?? 'info',
    base: { component, pipeline: `${pipeline.namespace}/${pipeline.name}`, pid: process.pid },
  });
  process.on('uncaughtException', (err) => {
    log.error('uncaught exception; exiting', { err: errorReason(err) });
    writeTerminationMessage(err);
    process.exit(1);
  });
  process.on('unhandledRejection', (err) => log.error('unhandled rejection', { err: errorReason(err) }));
  return log;
}
