/**
 * Parallel reconciles by default. Reconciles wait on shared round trips (topic batches, catalogue
 * probes, observer rounds) that coalesce whoever asks at once: at 300 new pipelines on 2 cores, 32
 * sent ~35 % fewer Kafka requests than 16 and finished sooner; backends stay protected by the
 * per-server limits of apply/in-flight.ts (issue 18, fifth round).
 */
export const DEFAULT_CONCURRENCY = 32;
