/**
 * `npm run demo`: the local stack (test bed, operator, pod runner), the example pipeline, realistic
 * firewall traffic at a chosen rate with a live view, and a closing summary with a legal query.
 * Bounded by --duration (plus the drain timeout); Ctrl-C once stops producing and summarises,
 * twice skips the drain. See `npm run demo -- --help`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { resolveSpec } from '../../operator/src/api/defaults';
import { accessLines } from './access';
import { parseArgs, USAGE, type DemoOptions } from './args';
import { Collector } from './collector';
import { Display } from './display';
import { waitForReady } from './ready';
import { ReceiverWatch } from './receiver-rates';
import { runDemo } from './run';
import { pruneToLogs, startStack, stopStack, type Stack } from './stack';
import { summaryJson, summaryLines, type SummaryFacts } from './summary';
import { freePort, tailLog } from '../../test/env/process';

const READY_TIMEOUT_MS = 180_000;
let interrupts = 0;

function say(msg: string): void {
  process.stderr.write(`${msg}\n`);
}

function onSignals(): void {
  const handler = (signal: NodeJS.Signals) => {
    interrupts++;
    if (interrupts === 1)
      say(`\n${signal}: stopping the traffic and summarising (again to skip waiting for the workers)`);
    else if (interrupts === 2) say(`\n${signal}: not waiting for the workers`);
    // A third signal means "now": the supervisors stop the bed when this process is gone.
    else process.exit(130);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  process.on('exit', () => process.stdout.isTTY && process.stdout.write('\x1b[?25h'));
}

function hasKubectl(): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((d) => fs.existsSync(path.join(d, 'kubectl')));
}

function printAccess(stack: Stack, spec: ReturnType<typeof resolveSpec>): void {
  const bed = stack.bed;
  const lines = accessLines({
    namespace: spec.namespace,
    name: spec.name,
    kubeconfig: stack.kubeconfig,
    apiServer: bed.kubernetes!.server,
    kafkaBootstrap: bed.kafka!.bootstrap,
    topic: spec.kafka.topic.name,
    clickhouseUrl: bed.clickhouse!.url,
    clickhouseUser: bed.clickhouse!.username,
    database: spec.clickhouse.database,
    table: spec.clickhouse.table,
    stateFile: stack.stateFile,
    operatorPid: stack.operator.pid,
    operatorLog: stack.operator.logFile,
    podRunnerPid: stack.podRunner.pid,
    podRunnerLog: stack.podRunner.logFile,
    hasKubectl: hasKubectl(),
  });
  process.stdout.write(`\n${lines.join('\n')}\n`);
}

/** Runs the demo on a started stack; returns the summary facts. */
async function demo(
  stack: Stack,
  opts: DemoOptions,
): Promise<{ facts: SummaryFacts; spec: ReturnType<typeof resolveSpec> }> {
  const name = stack.manifest.pipeline.metadata.name;
  say(`waiting for ${opts.namespace}/${name} to become Ready (topic, tables, workers)…`);
  const lp = await waitForReady({
    kubeconfig: stack.kubeconfig,
    namespace: opts.namespace,
    name,
    timeoutMs: READY_TIMEOUT_MS,
    say,
    aborted: () => interrupts > 0,
  });
  const spec = resolveSpec(lp);
  const bed = stack.bed;
  const collector = new Collector({
    kubeconfig: stack.kubeconfig,
    namespace: spec.namespace,
    name: spec.name,
    kafkaBootstrap: bed.kafka!.bootstrap,
    topic: spec.kafka.topic.name,
    groupId: spec.kafka.consumerGroup,
    clickhouse: {
      url: bed.clickhouse!.url,
      username: bed.clickhouse!.username,
      password: bed.clickhouse!.password,
    },
    database: spec.clickhouse.database,
    table: spec.clickhouse.table,
    deadLetterTable: spec.deadLetter.enabled ? spec.deadLetter.table : undefined,
  });
  say(
    spec.ingest
      ? `Ready. Sending ${opts.rate} lines/s of syslog over TCP to the receiver on 127.0.0.1:${spec.ingest.listeners[0].port} (packed into ${spec.kafka.topic.name}) for ${opts.durationMs / 1000}s…\n`
      : `Ready. Producing ${opts.rate} lines/s into ${spec.kafka.topic.name} for ${opts.durationMs / 1000}s…\n`,
  );
  try {
    const facts = await runDemo({
      pipeline: `${spec.namespace}/${spec.name}`,
      collector,
      display: new Display(process.stdout, `${spec.namespace}/${spec.name}`, opts.plain),
      syslog: stack.manifest.pipeline.spec.ingest?.syslog?.listeners[0].port,
      receiver: spec.ingest ? new ReceiverWatch(path.join(stack.dir, 'pods')) : undefined,
      produce: {
        bootstrap: bed.kafka!.bootstrap,
        topic: spec.kafka.topic.name,
        partitions: lp.status?.topic?.partitions ?? spec.kafka.topic.partitions,
      },
      database: spec.clickhouse.database,
      table: spec.clickhouse.table,
      timeColumn: spec.clickhouse.timeColumn,
      parser: {
        format: spec.parser.format,
        timezone: spec.parser.timezone,
        requiredFields: spec.parser.requiredFields,
      },
      rate: opts.rate,
      linesPerMessage: opts.linesPerMessage,
      malformedRatio: opts.malformedRatio,
      seed: opts.seed,
      durationMs: opts.durationMs,
      drainTimeoutMs: opts.drainTimeoutMs,
      interrupts: () => interrupts,
    });
    return { facts, spec };
  } finally {
    await collector.close();
  }
}

function newestWorkerLog(podsDir: string): string | undefined {
  if (!fs.existsSync(podsDir)) return undefined;
  const logs = fs
    .readdirSync(podsDir)
    .map((d) => path.join(podsDir, d, 'worker.log'))
    .filter((f) => fs.existsSync(f));
  return logs.sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];
}

function reportFailure(stack: Stack | undefined, err: unknown): void {
  say(`\ndemo failed: ${err instanceof Error ? err.message : String(err)}`);
  if (!stack) return;
  say(`--- operator log (tail) ---\n${tailLog(stack.operator.logFile, 25)}`);
  say(`--- pod runner log (tail) ---\n${tailLog(stack.podRunner.logFile, 10)}`);
  const worker = newestWorkerLog(path.join(stack.dir, 'pods'));
  if (worker) say(`--- newest worker log (${worker}, tail) ---\n${tailLog(worker, 10)}`);
}

async function main(): Promise<number> {
  const parsed = parseArgs(process.argv.slice(2));
  if (parsed.kind === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (parsed.kind === 'error') {
    say(`demo: ${parsed.message}`);
    return 2;
  }
  const opts = parsed.options;
  onSignals();
  const stack = await startStack({
    keep: opts.keep,
    example: opts.example,
    namespace: opts.namespace,
    maxReplicas: opts.maxReplicas,
    lagPerReplica: opts.lagPerReplica,
    syslogPort: opts.direct ? undefined : await freePort(),
    say,
  });
  let ok = false;
  let ran = false;
  try {
    const { facts, spec } = await demo(stack, opts);
    ran = true;
    process.stdout.write(`\n${summaryLines(facts).join('\n')}\n`);
    const json = summaryJson(facts);
    ok = json.complete && (json.legalQuery as { rows?: number } | null)?.rows !== undefined;
    if (opts.keep) printAccess(stack, spec);
    if (opts.jsonSummary) process.stdout.write(`${JSON.stringify(json)}\n`);
  } catch (err) {
    reportFailure(stack, err);
  } finally {
    // --keep keeps a stack that ran (even with a mismatch, to look into it), not one that failed.
    if (!opts.keep || !ran) {
      say('stopping the stack (workers drain first)…');
      await stopStack(stack);
      if (ok) fs.rmSync(stack.dir, { recursive: true, force: true });
      else {
        pruneToLogs(stack.dir);
        say(`logs of this run are kept under ${stack.dir}`);
      }
    }
  }
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    say(`demo failed: ${err.message}`);
    process.exit(1);
  },
);
