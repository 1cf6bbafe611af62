/**
 * One demo run once the pipeline is Ready: produce for the duration while the view refreshes,
 * stop producing, wait until every line is stored or dead-lettered (bounded), ask the legal query.
 */
import { Collector, type Observed } from './collector';
import type { Display } from './display';
import { runLegalQuery } from './legal-query';
import { TrafficProducer } from './producer';
import { receiverRateLine, type ReceiverWatch } from './receiver-rates';
import { SyslogSender } from './syslog-sender';
import { StatsTracker, type DemoView } from './stats';
import type { SummaryFacts } from './summary';
import { TrafficGenerator, type TrafficOptions } from './traffic';

/** What the run needs to know about the pipeline and the user's wishes. */
export interface RunContext {
  pipeline: string;
  collector: Collector;
  display: Display;
  produce: { bootstrap: string; topic: string; partitions: number };
  /** Local port of the pipeline's syslog receiver: traffic goes there over TCP instead of to Kafka. */
  syslog?: number;
  /** The receiver's metrics (with `syslog`): its received/packed/produced rates in the view and summary. */
  receiver?: ReceiverWatch;
  database: string;
  table: string;
  timeColumn: string;
  /** The pipeline's parser settings, to know which generated lines are records of the queried IP. */
  parser?: TrafficOptions['parser'];
  rate: number;
  linesPerMessage: number;
  malformedRatio: number;
  seed: number;
  durationMs: number;
  drainTimeoutMs: number;
  /** How many times the user interrupted (1: stop producing; 2: skip the drain). */
  interrupts: () => number;
}

const REFRESH_MS = 500;
const POLL_MS = 1_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls the collector in the background, at most one poll at a time. */
class Poller {
  latest: Observed = {};
  private timer?: NodeJS.Timeout;
  private busy = false;

  constructor(private readonly collector: Collector) {}

  start(): void {
    const tick = () => {
      if (this.busy) return;
      this.busy = true;
      this.collector
        .poll()
        .then((o) => void (this.latest = o))
        .finally(() => (this.busy = false));
    };
    tick();
    this.timer = setInterval(tick, POLL_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

/** The view with the receiver's latest rates under the totals (when traffic goes through it). */
function withReceiver(ctx: RunContext, view: DemoView): DemoView {
  const rates = ctx.receiver?.latestRates();
  return rates ? { ...view, extraLines: [receiverRateLine(rates)] } : view;
}

/** The Kafka producer or the syslog sender: both count what they handed on. */
type Sender = Pick<TrafficProducer, 'counters' | 'start' | 'stop'>;

function sample(tracker: StatsTracker, producer: Sender, observed: Observed): void {
  const c = producer.counters;
  tracker.add({
    atMs: Date.now(),
    producedLines: c.lines,
    producedMessages: c.messages,
    producedBytes: c.bytes,
    ...observed,
  });
}

/** Produces until the duration ends or the user interrupts, refreshing the view. */
async function produce(
  ctx: RunContext,
  tracker: StatsTracker,
  producer: Sender,
  poller: Poller,
): Promise<void> {
  const started = Date.now();
  await producer.start();
  while (Date.now() - started < ctx.durationMs && ctx.interrupts() === 0) {
    await sleep(Math.min(REFRESH_MS, Math.max(1, ctx.durationMs - (Date.now() - started))));
    sample(tracker, producer, poller.latest);
    await ctx.receiver?.poll();
    ctx.display.show(withReceiver(ctx, tracker.view('producing', Date.now())));
  }
  await producer.stop();
}

/**
 * Waits until every produced line is accounted for: rows + dead letters reach what was produced,
 * or the group has committed everything (lag 0, so all was stored: commits follow stores) and the
 * counts stopped moving, which ends a run with a shortfall without sitting out the timeout.
 * Returns when the last row arrived, or undefined on timeout or a second Ctrl-C.
 */
async function drain(ctx: RunContext, tracker: StatsTracker, producer: Sender): Promise<number | undefined> {
  const deadline = Date.now() + ctx.drainTimeoutMs;
  const c = producer.counters;
  let last = -1;
  let lastChangeMs = Date.now();
  for (;;) {
    const observed = await ctx.collector.poll();
    const now = Date.now();
    tracker.add({
      atMs: now,
      producedLines: c.lines,
      producedMessages: c.messages,
      producedBytes: c.bytes,
      ...observed,
    });
    await ctx.receiver?.poll(now);
    ctx.display.show(withReceiver(ctx, tracker.view('draining', now)));
    const stored =
      observed.insertedRows === undefined || observed.deadLetters === undefined
        ? undefined
        : observed.insertedRows + observed.deadLetters;
    if (stored !== undefined && stored >= c.lines) return now;
    if (stored !== undefined && stored === last && observed.lagMessages === 0) return lastChangeMs;
    if (stored !== undefined && stored !== last) {
      last = stored;
      lastChangeMs = now;
    }
    if (now >= deadline || ctx.interrupts() >= 2) return undefined;
    await sleep(REFRESH_MS);
  }
}

/** The whole run; returns the facts of the summary. */
export async function runDemo(ctx: RunContext): Promise<SummaryFacts> {
  const traffic = new TrafficGenerator({
    linesPerMessage: ctx.linesPerMessage,
    malformedRatio: ctx.malformedRatio,
    seed: ctx.seed,
    parser: ctx.parser,
  });
  const producer: Sender =
    ctx.syslog !== undefined
      ? new SyslogSender(
          { host: '127.0.0.1', port: ctx.syslog, rate: ctx.rate, linesPerMessage: ctx.linesPerMessage },
          traffic,
        )
      : new TrafficProducer(
          { ...ctx.produce, rate: ctx.rate, linesPerMessage: ctx.linesPerMessage },
          traffic,
        );
  const tracker = new StatsTracker(Date.now(), {
    durationMs: ctx.durationMs,
    targetRate: ctx.rate,
    linesPerMessage: ctx.linesPerMessage,
    historyLength: 30,
  });
  const poller = new Poller(ctx.collector);
  poller.start();
  try {
    await produce(ctx, tracker, producer, poller);
  } finally {
    poller.stop();
  }
  const c = producer.counters;
  const storedAt = await drain(ctx, tracker, producer);
  const final = await ctx.collector.poll();
  sample(tracker, producer, final);
  await ctx.receiver?.poll();
  const view = withReceiver(ctx, tracker.view('done', Date.now()));
  ctx.display.show(view, true);
  ctx.display.close();
  const facts: SummaryFacts = {
    pipeline: ctx.pipeline,
    targetRate: ctx.rate,
    linesPerMessage: ctx.linesPerMessage,
    producedLines: c.lines,
    producedMessages: c.messages,
    producedBytes: c.bytes,
    malformedLines: c.malformed,
    failedSends: c.failedSends,
    insertedRows: view.insertedRows,
    deadLetters: view.deadLetters,
    productionMs: (c.lastAckMs ?? 0) - (c.firstSendMs ?? 0),
    endToEndMs: storedAt !== undefined && c.firstSendMs !== undefined ? storedAt - c.firstSendMs : undefined,
    drainMs:
      storedAt !== undefined && c.lastAckMs !== undefined ? Math.max(0, storedAt - c.lastAckMs) : undefined,
    maxReplicas: view.maxReplicasSeen,
    interrupted: ctx.interrupts() > 0,
    receiver: ctx.receiver?.summary(),
  };
  await legalQuery(ctx, traffic, c, facts);
  return facts;
}

async function legalQuery(
  ctx: RunContext,
  traffic: TrafficGenerator,
  c: Sender['counters'],
  facts: SummaryFacts,
): Promise<void> {
  const ip = traffic.queryIp;
  if (!ip || c.firstSendMs === undefined) {
    facts.legalQueryError = 'no traffic was produced';
    return;
  }
  facts.queryIpMentions = traffic.queryIpMentions;
  facts.queryIpRecords = traffic.queryIpRecords;
  try {
    facts.legalQuery = await runLegalQuery(ctx.collector.clickhouse, {
      database: ctx.database,
      table: ctx.table,
      timeColumn: ctx.timeColumn,
      ip,
      // The window of the run with a minute's margin: device clocks and line stamps are not exact.
      fromMs: c.firstSendMs - 60_000,
      toMs: (c.lastAckMs ?? Date.now()) + 60_000,
      limit: 100_000,
    });
  } catch (err) {
    facts.legalQueryError = (err as Error).message.split('\n')[0];
  }
}
