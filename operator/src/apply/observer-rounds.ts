/**
 * Observation rounds (one per Kafka cluster and interval, whatever the number of pipelines on it):
 * how long each took and how many requests of each API it sent. Process-global like the request
 * counters; the metrics module registers both histograms in its registry. A round that sent no
 * request of an API seen before still observes 0 for it, so `_sum / _count` is the mean per round.
 */
import { Histogram } from 'prom-client';

/** Duration of one observer round, by system (`kafka`). */
export const observerRoundSeconds = new Histogram({
  name: 'logpipeline_operator_observer_round_seconds',
  help: 'Duration of one shared observation round (one per cluster and interval), by system.',
  labelNames: ['system'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [],
});

/** Requests one observer round sent, by system and API (`OffsetFetch`, `Metadata`, …). */
export const observerRoundRequests = new Histogram({
  name: 'logpipeline_operator_observer_round_requests',
  help: 'Requests sent by one shared observation round, by system and API (O(brokers), not O(pipelines)).',
  labelNames: ['system', 'api'],
  buckets: [0, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000],
  registers: [],
});

const seen = new Map<string, Set<string>>();

/** Records one finished round. */
export function recordObserverRound(
  system: string,
  seconds: number,
  requests: ReadonlyMap<string, number>,
): void {
  observerRoundSeconds.observe({ system }, seconds);
  const apis = seen.get(system) ?? new Set<string>();
  seen.set(system, apis);
  for (const api of requests.keys()) apis.add(api);
  for (const api of apis) observerRoundRequests.observe({ system, api }, requests.get(api) ?? 0);
}
