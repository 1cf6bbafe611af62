/**
 * Loads the receiver's configuration file (common/src/ingest-config.ts is the contract the operator
 * renders into the receiver's ConfigMap). Missing optional fields take INGEST_DEFAULTS, so a
 * hand-written file for a test or a bench needs only Kafka and the listeners.
 */
import fs from 'node:fs';
import { INGEST_DEFAULTS, RECEIVER_CONFIG_PATH, type IngestConfig } from '../../../common/src/ingest-config';

/** Reads LP_CONFIG (default RECEIVER_CONFIG_PATH); throws naming the file on a missing or invalid one. */
export function loadIngestConfig(env: NodeJS.ProcessEnv): IngestConfig {
  const path = env.LP_CONFIG ?? RECEIVER_CONFIG_PATH;
  const raw = JSON.parse(fs.readFileSync(path, 'utf8')) as Partial<IngestConfig>;
  return validateIngestConfig(
    {
      ...INGEST_DEFAULTS,
      allowedSourceCIDRs: [],
      ...raw,
      packing: { ...INGEST_DEFAULTS.packing, ...raw.packing },
    } as IngestConfig,
    path,
  );
}

/** Refuses a config the receiver cannot run with (the operator validates at admission; this guards hand edits). */
export function validateIngestConfig(cfg: IngestConfig, source: string): IngestConfig {
  const fail = (why: string): never => {
    throw new Error(`${source}: ${why}`);
  };
  if (!cfg.kafka?.brokers?.length || !cfg.kafka.topic) fail('kafka.brokers and kafka.topic are required');
  if (!cfg.listeners?.length) fail('at least one listener is required');
  const names = new Set<string>();
  for (const l of cfg.listeners) {
    if (names.has(l.name)) fail(`listener name ${l.name} is used twice`);
    names.add(l.name);
    if (!['udp', 'tcp', 'tls'].includes(l.transport))
      fail(`listener ${l.name}: unknown transport ${l.transport}`);
    if (!Number.isInteger(l.port) || l.port < 0 || l.port > 65_535)
      fail(`listener ${l.name}: bad port ${l.port}`);
  }
  if (cfg.listeners.some((l) => l.transport === 'tls') && !cfg.tls) fail('a tls listener needs tls');
  const p = cfg.packing;
  if (!(p.maxLines >= 1 && p.maxBytes >= 1 && p.lingerMs >= 1)) fail('packing limits must be positive');
  if (cfg.maxFrameBytes > p.maxBytes) fail('maxFrameBytes must not exceed packing.maxBytes');
  return cfg;
}
