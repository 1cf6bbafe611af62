/**
 * Turns the example manifest into what the demo applies on the local stack: the LogPipeline
 * pointed at the bed's Kafka and ClickHouse, and every Secret it references filled with the
 * bed's credentials or a fresh signing key. Pure: the caller reads the file and applies the result.
 */
import { parseAllDocuments } from 'yaml';
import { API_VERSION, KIND, type LogPipeline } from '../../operator/src/api/types';

/** Where the bed is and which secret material the Secrets get (never printed). */
export interface DemoEndpoints {
  kafkaBootstrap: string;
  clickhouseUrl: string;
  clickhouseUser: string;
  clickhousePassword: string;
  /** Ed25519 private key, PEM (PKCS#8). */
  signingKeyPem: string;
}

/** A Secret to create (stringData), by name. */
export interface DemoSecret {
  name: string;
  stringData: Record<string, string>;
}

/** What the demo applies, plus what it changed in the example and why. */
export interface DemoManifest {
  pipeline: LogPipeline;
  secrets: DemoSecret[];
  /** Human-readable adjustments (e.g. SASL dropped: the bed's broker has none). */
  notes: string[];
}

function addKeys(
  secrets: Map<string, Record<string, string>>,
  name: string,
  data: Record<string, string>,
): void {
  secrets.set(name, { ...(secrets.get(name) ?? {}), ...data });
}

/** Points the pipeline at the bed and drops what the bed cannot serve; returns the notes. */
function adaptSpec(lp: LogPipeline, endpoints: DemoEndpoints, opts: DemoManifestOptions): string[] {
  const { maxReplicas, lagPerReplica } = opts;
  const notes: string[] = [];
  const spec = lp.spec;
  spec.kafka.bootstrapServers = [endpoints.kafkaBootstrap];
  spec.clickhouse.url = endpoints.clickhouseUrl;
  if (spec.kafka.sasl) {
    delete spec.kafka.sasl;
    notes.push('kafka.sasl removed: the local broker has no SASL listener');
  }
  if (spec.kafka.tls) {
    delete spec.kafka.tls;
    notes.push('kafka.tls removed: the local broker listens in plaintext on loopback');
  }
  if (spec.kafka.topic?.replicationFactor && spec.kafka.topic.replicationFactor > 1) {
    spec.kafka.topic.replicationFactor = 1;
    notes.push('kafka.topic.replicationFactor set to 1: the local broker is a single node');
  }
  if (spec.clickhouse.cluster) {
    delete spec.clickhouse.cluster;
    notes.push('clickhouse.cluster removed: the local ClickHouse engine is a single server');
  }
  if (spec.integrity?.tsaUrl) {
    delete spec.integrity.tsaUrl;
    notes.push('integrity.tsaUrl removed: no time-stamping authority is reachable offline');
  }
  const as = spec.workers?.autoscaling;
  if (as?.enabled && (as.maxReplicas ?? Infinity) > maxReplicas) {
    as.maxReplicas = maxReplicas;
    if ((as.minReplicas ?? 1) > maxReplicas) as.minReplicas = maxReplicas;
    notes.push(`workers.autoscaling.maxReplicas capped at ${maxReplicas} (workers are local processes here)`);
  }
  if (as?.enabled && lagPerReplica) {
    as.lagPerReplica = lagPerReplica;
    notes.push(`workers.autoscaling.lagPerReplica set to ${lagPerReplica} (--lag-per-replica)`);
  }
  if (!as?.enabled && (spec.workers?.replicas ?? 1) > maxReplicas) {
    spec.workers!.replicas = maxReplicas;
    notes.push(`workers.replicas capped at ${maxReplicas} (workers are local processes here)`);
  }
  adaptIngest(spec, opts.syslogPort, notes);
  return notes;
}

/**
 * One local TCP receiver (LF framing: generated malformed lines may start with digits) on
 * `port`, or none when the traffic goes straight to Kafka.
 */
function adaptIngest(spec: LogPipeline['spec'], port: number | undefined, notes: string[]): void {
  if (port === undefined) {
    if (spec.ingest) notes.push('ingest removed: --direct produces straight into Kafka');
    delete spec.ingest;
    return;
  }
  spec.ingest = {
    syslog: { listeners: [{ name: 'tcp', protocol: 'TCP', port, framing: 'lf' }], replicas: 1 },
  };
  notes.push(
    `ingest.syslog set to one TCP receiver on local port ${port} (the demo sends its traffic there)`,
  );
}

/** The Secrets the pipeline references, filled for the bed (the example's own values are ignored). */
function referencedSecrets(lp: LogPipeline, endpoints: DemoEndpoints): DemoSecret[] {
  const secrets = new Map<string, Record<string, string>>();
  for (const ref of [lp.spec.clickhouse.credentialsSecretRef, lp.spec.clickhouse.adminCredentialsSecretRef]) {
    if (!ref) continue;
    addKeys(secrets, ref.name, {
      [ref.usernameKey ?? 'username']: endpoints.clickhouseUser,
      [ref.passwordKey ?? 'password']: endpoints.clickhousePassword,
    });
  }
  const key = lp.spec.integrity?.signingKeySecretRef;
  if (key) addKeys(secrets, key.name, { [key.key || 'ed25519.pem']: endpoints.signingKeyPem });
  return [...secrets].map(([name, stringData]) => ({ name, stringData }));
}

/** How the demo adapts the example beyond the endpoints. */
export interface DemoManifestOptions {
  namespace: string;
  /** Cap on replicas (local processes share this machine's cores). */
  maxReplicas: number;
  /** Replaces autoscaling.lagPerReplica when set (non-zero). */
  lagPerReplica?: number;
  /** Local port of the syslog receiver the traffic is sent to; absent: no receiver (direct to Kafka). */
  syslogPort?: number;
}

/**
 * Builds the demo's objects from the example's YAML text (one LogPipeline, optionally other
 * documents, which are ignored): namespace set, bed endpoints in, referenced Secrets generated.
 */
export function buildDemoManifest(
  yamlText: string,
  endpoints: DemoEndpoints,
  opts: DemoManifestOptions,
): DemoManifest {
  const docs = parseAllDocuments(yamlText);
  const objects: unknown[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`example manifest: ${doc.errors[0].message}`);
    const value: unknown = doc.toJS();
    if (value) objects.push(value);
  }
  const pipelines = objects.filter((o): o is LogPipeline => (o as { kind?: string }).kind === KIND);
  if (pipelines.length === 0) throw new Error('example manifest: no LogPipeline document');
  const source = pipelines[0];
  if (source.apiVersion !== API_VERSION) {
    throw new Error(`example manifest: LogPipeline apiVersion ${source.apiVersion}, expected ${API_VERSION}`);
  }
  const pipeline: LogPipeline = structuredClone(source);
  pipeline.metadata = {
    name: source.metadata.name,
    namespace: opts.namespace,
    ...(source.metadata.labels ? { labels: source.metadata.labels } : {}),
    ...(source.metadata.annotations ? { annotations: source.metadata.annotations } : {}),
  };
  delete pipeline.status;
  const notes = adaptSpec(pipeline, endpoints, opts);
  if (pipelines.length > 1) notes.push(`only the first LogPipeline (${source.metadata.name}) is applied`);
  return { pipeline, secrets: referencedSecrets(pipeline, endpoints), notes };
}
