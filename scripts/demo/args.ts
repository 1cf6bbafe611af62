/**
 * Command line of `npm run demo`: flags, their defaults and the --help text. Pure (no I/O), so the
 * parsing rules are unit-tested and the help text cannot drift from what is parsed.
 */
import { parseDuration } from '../../operator/src/api/duration';

/** Everything the demo can be told on its command line. */
export interface DemoOptions {
  /** Lines per second the traffic generator aims at. */
  rate: number;
  /** Lines packed (LF-joined) into one Kafka message. */
  linesPerMessage: number;
  /** How long traffic is produced before the demo drains and stops. */
  durationMs: number;
  /** Bound on waiting for the workers to store everything after production stops. */
  drainTimeoutMs: number;
  /** Fraction of lines mutated into (mostly) malformed ones. */
  malformedRatio: number;
  /** Manifest with the LogPipeline (and optionally Secrets) to apply. */
  example: string;
  /** Namespace the manifest is applied to. */
  namespace: string;
  /** Cap on the pipeline's autoscaling maxReplicas (local processes share this machine's cores). */
  maxReplicas: number;
  /** Overrides the pipeline's autoscaling lagPerReplica (messages), 0 keeps the example's. */
  lagPerReplica: number;
  /** PRNG seed of the traffic (runs are reproducible). */
  seed: number;
  /** Leave the stack running after the summary. */
  keep: boolean;
  /** Print a final machine-readable JSON line. */
  jsonSummary: boolean;
  /** Force plain periodic lines even on a terminal. */
  plain: boolean;
  /** Produce straight into Kafka instead of sending syslog over TCP to the pipeline's receiver. */
  direct: boolean;
}

/** The outcome of parsing: options to run with, a help request, or a usage error. */
export type ParsedArgs =
  { kind: 'run'; options: DemoOptions } | { kind: 'help' } | { kind: 'error'; message: string };

/** Defaults of every flag. */
export const DEFAULT_OPTIONS: Readonly<DemoOptions> = {
  rate: 20_000,
  linesPerMessage: 50,
  durationMs: 60_000,
  drainTimeoutMs: 60_000,
  malformedRatio: 0.005,
  example: 'examples/firewall.yaml',
  namespace: 'demo',
  maxReplicas: 4,
  lagPerReplica: 0,
  seed: 1,
  keep: false,
  jsonSummary: false,
  plain: false,
  direct: false,
};

/** The --help text. */
export const USAGE = `Usage: npm run demo -- [flags]

Brings up the local stack (Kubernetes API server, Kafka, ClickHouse engine), the operator and the
local pod runner (a kubelet stand-in that runs the worker Deployments as local processes), applies
the example LogPipeline with a syslog receiver, sends realistic firewall traffic to it over TCP
(or, with --direct, produces it straight into the topic) and shows what the pipeline does with it. Stops by itself after --duration (Ctrl-C stops earlier) and prints a summary.

Flags:
  --rate N                 lines per second to produce (default ${DEFAULT_OPTIONS.rate})
  --lines-per-message N    lines packed into one Kafka message, LF-separated (default ${DEFAULT_OPTIONS.linesPerMessage})
  --duration D             how long to produce, e.g. 60s, 2m, 1m30s (default ${DEFAULT_OPTIONS.durationMs / 1000}s)
  --drain-timeout D        how long to wait for the workers to store the rest (default ${DEFAULT_OPTIONS.drainTimeoutMs / 1000}s)
  --malformed R            fraction of lines mutated into malformed ones, 0..1 (default ${DEFAULT_OPTIONS.malformedRatio})
  --example FILE           manifest with the LogPipeline to apply (default ${DEFAULT_OPTIONS.example})
  --namespace NS           namespace to apply it in (default ${DEFAULT_OPTIONS.namespace})
  --max-replicas N         cap on the pipeline's autoscaling maxReplicas on this machine (default ${DEFAULT_OPTIONS.maxReplicas})
  --lag-per-replica N      override the pipeline's autoscaling lagPerReplica (Kafka messages per worker),
                           e.g. 1000 to watch the workers scale out on this machine (default: the example's)
  --seed N                 traffic PRNG seed (default ${DEFAULT_OPTIONS.seed})
  --keep                   leave the stack running afterwards and print how to reach it
  --json-summary           end with one JSON line with the summary (for scripts and tests)
  --plain                  plain periodic lines instead of the live view (automatic when not a TTY)
  --direct                 produce packed messages straight into Kafka instead of sending syslog over
                           TCP to the pipeline's receiver (spec.ingest.syslog, added for the run)
  --help                   this text

Durations: a number of seconds, or Go-style like 90s, 2m, 1m30s, 500ms.`;

type FlagKind = 'int' | 'ratio' | 'duration' | 'string' | 'bool';

const FLAGS: Record<string, { key: keyof DemoOptions; kind: FlagKind; min?: number }> = {
  rate: { key: 'rate', kind: 'int', min: 1 },
  'lines-per-message': { key: 'linesPerMessage', kind: 'int', min: 1 },
  duration: { key: 'durationMs', kind: 'duration', min: 1 },
  'drain-timeout': { key: 'drainTimeoutMs', kind: 'duration', min: 0 },
  malformed: { key: 'malformedRatio', kind: 'ratio' },
  example: { key: 'example', kind: 'string' },
  namespace: { key: 'namespace', kind: 'string' },
  'max-replicas': { key: 'maxReplicas', kind: 'int', min: 1 },
  'lag-per-replica': { key: 'lagPerReplica', kind: 'int', min: 0 },
  seed: { key: 'seed', kind: 'int', min: 0 },
  keep: { key: 'keep', kind: 'bool' },
  'json-summary': { key: 'jsonSummary', kind: 'bool' },
  plain: { key: 'plain', kind: 'bool' },
  direct: { key: 'direct', kind: 'bool' },
};

/** Parses "60s", "2m", "1m30s", "500ms" or a bare number of seconds; undefined when neither. */
export function parseDemoDuration(text: string): number | undefined {
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  return parseDuration(text);
}

function convert(name: string, kind: FlagKind, text: string, min = 0): number | string | Error {
  if (kind === 'string') return text === '' ? new Error(`--${name} needs a value`) : text;
  if (kind === 'duration') {
    const ms = parseDemoDuration(text);
    return ms === undefined || ms < min
      ? new Error(`--${name}: '${text}' is not a duration like 60s or 2m`)
      : ms;
  }
  const n = Number(text);
  if (kind === 'ratio')
    return text !== '' && n >= 0 && n <= 1
      ? n
      : new Error(`--${name}: '${text}' is not a fraction between 0 and 1`);
  return text !== '' && Number.isSafeInteger(n) && n >= min
    ? n
    : new Error(`--${name}: '${text}' is not an integer >= ${min}`);
}

/** Parses the demo's arguments (`--flag value` or `--flag=value`) over the defaults. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const options: DemoOptions = { ...DEFAULT_OPTIONS };
  const values = options as unknown as Record<string, unknown>;
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(argv[i]);
    if (!m) return { kind: 'error', message: `unexpected argument '${argv[i]}' (see --help)` };
    const [, name, inline] = m;
    if (name === 'help') return { kind: 'help' };
    const flag = FLAGS[name];
    if (!flag) return { kind: 'error', message: `unknown flag --${name} (see --help)` };
    if (flag.kind === 'bool') {
      if (inline !== undefined && inline !== 'true' && inline !== 'false') {
        return { kind: 'error', message: `--${name} takes no value (or =true/=false)` };
      }
      values[flag.key] = inline !== 'false';
      continue;
    }
    const text = inline ?? argv[++i];
    if (text === undefined) return { kind: 'error', message: `--${name} needs a value` };
    const value = convert(name, flag.kind, text, flag.min);
    if (value instanceof Error) return { kind: 'error', message: value.message };
    values[flag.key] = value;
  }
  return { kind: 'run', options };
}
