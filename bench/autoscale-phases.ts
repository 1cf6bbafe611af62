/**
 * Per-phase counters of the scale benchmark (PLAN 18): CPU of the operator and of the bed's
 * kube-apiserver, reconciles, and the deltas of the operator's own request counters
 * (logpipeline_operator_{kube,clickhouse,kafka}_requests_total, reconcile phase seconds).
 */
import {
  cpuSeconds,
  metric,
  metricSeries,
  scrape,
  seriesDelta,
  until,
  type OperatorProcess,
} from './autoscale-support';
import { fleetPhase, type FleetPhase } from './autoscale-histograms';
import { memoryBreakdown } from './autoscale-memory';

/** A snapshot taken at a phase boundary. */
export interface Mark {
  at: number;
  op: number;
  api: number;
  /** CPU seconds of the other bed services (etcd, kafka, clickhouse), when known. */
  others?: Record<string, number>;
  text: string;
}

/** Counters of one phase (the requests counters are the operator's own metrics). */
export interface PhaseCounters {
  seconds: number;
  operatorCpuSeconds: number;
  apiserverCpuSeconds: number;
  /** CPU seconds of the other bed services in the phase (etcd, kafka, clickhouse). */
  otherCpuSeconds?: Record<string, number>;
  reconciles: number;
  reconcileSeconds: number;
  kube: Record<string, number>;
  clickhouse: Record<string, number>;
  kafka: Record<string, number>;
  phases: Record<string, number>;
  perReconcile: { kube: number; clickhouse: number; kafka: number };
  /** Kafka observer rounds: how many, their mean duration and mean requests per round by API. */
  observerRounds?: { rounds: number; meanSeconds: number; requestsPerRound: Record<string, number> };
  /** Per-reconcile request histograms, queue wait, catalogue and Event counts (autoscale-histograms.ts). */
  fleet: FleetPhase;
  /** Requests and operator CPU milliseconds per pipeline per minute (steady windows). */
  perPipelinePerMinute?: { kube: number; clickhouse: number; kafka: number; operatorCpuMs: number };
}

/** The counters between two marks. */
export function phase(a: Mark, b: Mark, pipelines?: number): PhaseCounters {
  const d = (name: string) => seriesDelta(metricSeries(a.text, name), metricSeries(b.text, name));
  const sum = (r: Record<string, number>) => Object.values(r).reduce((x, y) => x + y, 0);
  const reconciles =
    metric(b.text, 'logpipeline_operator_reconcile_total').sum -
    metric(a.text, 'logpipeline_operator_reconcile_total').sum;
  const kube = d('logpipeline_operator_kube_requests_total');
  const clickhouse = d('logpipeline_operator_clickhouse_requests_total');
  const kafka = d('logpipeline_operator_kafka_requests_total');
  const phases = d('logpipeline_operator_reconcile_phase_seconds_total');
  for (const k of Object.keys(phases)) phases[k] = Math.round(phases[k] * 100) / 100;
  const per = (r: Record<string, number>) => (reconciles ? Math.round((sum(r) / reconciles) * 100) / 100 : 0);
  return {
    seconds: (b.at - a.at) / 1000,
    operatorCpuSeconds: Math.round((b.op - a.op) * 100) / 100,
    apiserverCpuSeconds: Math.round((b.api - a.api) * 100) / 100,
    otherCpuSeconds: Object.fromEntries(
      Object.entries(b.others ?? {}).map(([k, v]) => [k, Math.round((v - (a.others?.[k] ?? 0)) * 100) / 100]),
    ),
    reconciles,
    reconcileSeconds:
      Math.round(
        (metric(b.text, 'logpipeline_operator_reconcile_duration_seconds_sum').sum -
          metric(a.text, 'logpipeline_operator_reconcile_duration_seconds_sum').sum) *
          100,
      ) / 100,
    kube,
    clickhouse,
    kafka,
    phases,
    perReconcile: { kube: per(kube), clickhouse: per(clickhouse), kafka: per(kafka) },
    observerRounds: observerRounds(d),
    fleet: fleetPhase(a.text, b.text),
    ...(pipelines
      ? { perPipelinePerMinute: perPipelinePerMinute(a, b, pipelines, { kube, clickhouse, kafka }) }
      : {}),
  };
}

/** Kafka observer rounds between two marks (logpipeline_operator_observer_round_*). */
function observerRounds(d: (name: string) => Record<string, number>): PhaseCounters['observerRounds'] {
  const rounds = d('logpipeline_operator_observer_round_seconds_count').kafka ?? 0;
  const seconds = d('logpipeline_operator_observer_round_seconds_sum').kafka ?? 0;
  const sums = d('logpipeline_operator_observer_round_requests_sum');
  const counts = d('logpipeline_operator_observer_round_requests_count');
  const requestsPerRound: Record<string, number> = {};
  for (const [key, n] of Object.entries(counts))
    if (key.startsWith('kafka ') && n > 0)
      requestsPerRound[key.slice(6)] = Math.round(((sums[key] ?? 0) / n) * 100) / 100;
  return { rounds, meanSeconds: rounds ? Math.round((seconds / rounds) * 1000) / 1000 : 0, requestsPerRound };
}

function perPipelinePerMinute(
  a: Mark,
  b: Mark,
  n: number,
  r: Record<'kube' | 'clickhouse' | 'kafka', Record<string, number>>,
) {
  const minutes = (b.at - a.at) / 60_000;
  const per = (x: number) => Math.round((x / n / minutes) * 1000) / 1000;
  const sum = (m: Record<string, number>) => Object.values(m).reduce((x, y) => x + y, 0);
  return {
    kube: per(sum(r.kube)),
    clickhouse: per(sum(r.clickhouse)),
    kafka: per(sum(r.kafka)),
    operatorCpuMs: per((b.op - a.op) * 1000),
  };
}

/** Cold start of a fresh operator over `n` Ready pipelines: time back to steady and its whole counters. */
export async function coldStart(op: OperatorProcess, n: number): Promise<Record<string, unknown>> {
  const r0 = Date.now();
  let backAt = 0;
  await until(
    'restarted operator steady',
    async () => {
      const text = await scrape(op);
      const done = metric(text, 'logpipeline_operator_reconcile_total').sum >= n;
      const idle = metric(text, 'logpipeline_operator_queue_depth').sum === 0;
      if (done && idle && !backAt) backAt = Date.now();
      return done && idle;
    },
    600_000,
    500,
  );
  await new Promise((r) => setTimeout(r, 5_000));
  const text = await scrape(op);
  const all = (name: string) => seriesDelta(new Map(), metricSeries(text, name));
  return {
    backToSteadySeconds: (backAt - r0) / 1000,
    reconciles: metric(text, 'logpipeline_operator_reconcile_total').sum,
    operatorCpuSeconds: cpuSeconds(op.child.pid!),
    kube: all('logpipeline_operator_kube_requests_total'),
    clickhouse: all('logpipeline_operator_clickhouse_requests_total'),
    clickhouseStatements: all('logpipeline_operator_clickhouse_statements_total'),
    kafka: all('logpipeline_operator_kafka_requests_total'),
    fleet: fleetPhase('', text),
    /** The fresh operator's memory 5 s after its queue drained (no creation storm behind it). */
    memory: memoryBreakdown(op.child.pid!, text),
  };
}
