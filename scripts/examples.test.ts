/**
 * The example manifests and sample logs never rot: every LogPipeline under examples/ passes the
 * admission schema and CEL rules (validatePipeline), resolves into a topic, table DDL and worker
 * config with the operator's own builders, and every sample log line goes through the worker's real
 * parser and encoder with that pipeline's configuration without a single dead letter.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { BatchEncoder } from '../consumer/src/encode/batch';
import { LineParser } from '../consumer/src/parse/parser';
import { FORMAT_NAMES, VENDOR_NAMES } from '../consumer/src/parse/record';
import { recordToObject } from '../consumer/src/parse/to-json';
import { resolveSpec } from '../operator/src/api/defaults';
import { PARSER_FORMATS } from '../operator/src/api/schema-kafka';
import type { LogPipeline } from '../operator/src/api/types';
import { formatValidationError, validatePipeline } from '../operator/src/api/validate';
import { buildTableDDL, buildWorkerColumns, resolveTableSchema } from '../operator/src/desired/clickhouse';
import { buildWorkerConfig } from '../operator/src/desired/configmap';
import {
  buildIngestDeployment,
  buildIngestService,
  renderIngestConfig,
  type IngestSpec,
} from '../operator/src/desired/ingest';
import { buildDeadLetterTopicSpec, buildTopicSpec } from '../operator/src/desired/topic';
import { referencedSecrets } from '../operator/src/controller/secrets';
import { REPO_ROOT } from './helm';

const EXAMPLES = path.join(REPO_ROOT, 'examples');
const FORMATS = path.join(EXAMPLES, 'formats');
/** Ingest time of the encoded samples: also the reference for year inference of clock-only stamps. */
const INGEST_MS = Date.UTC(2025, 2, 15, 12, 0, 0);

type K8sObject = {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string };
  stringData?: Record<string, string>;
};

function yamlFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? yamlFiles(path.join(dir, e.name))
        : e.name.endsWith('.yaml')
          ? [path.join(dir, e.name)]
          : [],
    );
}

function load(file: string): K8sObject[] {
  return parseAllDocuments(fs.readFileSync(file, 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0].message}`);
    return doc.toJS() as K8sObject;
  });
}

function pipelinesOf(file: string): LogPipeline[] {
  return load(file).filter((o) => o.kind === 'LogPipeline') as unknown as LogPipeline[];
}

function sampleLines(format: string): string[] {
  return fs
    .readFileSync(path.join(FORMATS, `${format}.log`), 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}

const files = yamlFiles(EXAMPLES).map((f) => path.relative(REPO_ROOT, f));

describe('examples/', () => {
  it('has the quickstart, the retention and column examples, and one example and sample per parser format', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'examples/firewall.yaml',
        'examples/tiered-retention.yaml',
        'examples/custom-columns.yaml',
        'examples/firewall-syslog.yaml',
      ]),
    );
    for (const format of PARSER_FORMATS) {
      expect(files).toContain(`examples/formats/${format}.yaml`);
      expect(sampleLines(format).length).toBeGreaterThanOrEqual(3);
    }
    const logs = fs.readdirSync(FORMATS).filter((f) => f.endsWith('.log'));
    expect(logs.sort()).toEqual(PARSER_FORMATS.map((f) => `${f}.log`).sort());
  });
});

describe.each(files)('%s', (file) => {
  const pipelines = pipelinesOf(path.join(REPO_ROOT, file));

  it('holds exactly one LogPipeline that admission accepts', () => {
    expect(pipelines).toHaveLength(1);
    expect(validatePipeline(pipelines[0]).map(formatValidationError)).toEqual([]);
  });

  it('resolves into a topic, tables and a worker config with the operator builders', () => {
    const spec = resolveSpec(pipelines[0]);
    expect(buildTopicSpec(spec)).toMatchObject({ ok: true });
    expect(buildDeadLetterTopicSpec(spec) ?? { ok: true }).toMatchObject({ ok: true });
    expect(buildTableDDL(spec)).toMatchObject({ ok: true });
    const columns = buildWorkerColumns(resolveTableSchema(spec));
    expect(columns.length).toBeGreaterThan(0);
    expect(buildWorkerConfig(spec, columns).clickhouse.columns).toEqual(columns);
    if (spec.ingest) {
      const ingest = spec as IngestSpec;
      const service = buildIngestService(ingest);
      expect(service.spec.ports.length).toBe(spec.ingest.listeners.length);
      expect(
        buildIngestDeployment(ingest, renderIngestConfig(ingest)).spec.template.spec.containers,
      ).toHaveLength(1);
    }
  });

  it("encodes the sample log of its parser format with the worker's parser and encoder, no dead letters", () => {
    const spec = resolveSpec(pipelines[0]);
    const config = buildWorkerConfig(spec, buildWorkerColumns(resolveTableSchema(spec)));
    const encoder = new BatchEncoder({
      parser: config.parser,
      columns: config.clickhouse.columns,
      staticFields: config.parser.staticFields,
    });
    const lines = sampleLines(spec.parser.format);
    const value = Buffer.from(lines.join('\n'), 'utf8');
    const batch = encoder.encode(
      [{ value, topic: spec.kafka.topic.name, partition: 0, offset: 0 }],
      INGEST_MS,
    );
    const rejected = batch.deadLetters.map((d) => `${d.reason}: ${d.line.toString('utf8')}`);
    expect(rejected).toEqual([]);
    expect(batch.rows).toBe(lines.length);
  });

  it('takes every field: column from a key its sample lines really carry', () => {
    const spec = resolveSpec(pipelines[0]);
    const parser = new LineParser({ ...spec.parser, collectFields: true });
    parser.setReferenceTime(INGEST_MS);
    const seen = new Set<string>();
    for (const line of sampleLines(spec.parser.format)) {
      const buf = Buffer.from(line, 'utf8');
      if (parser.parse(buf, 0, buf.length) === null)
        for (const key of Object.keys(recordToObject(parser.record))) seen.add(key);
    }
    const fieldSources = spec.clickhouse.columns
      .map((c) => c.source)
      .filter((s): s is string => !!s?.startsWith('field:'));
    expect(fieldSources.filter((s) => !seen.has(s))).toEqual([]);
  });
});

describe('examples/formats/<format>.log', () => {
  it.each(PARSER_FORMATS.filter((f) => f !== 'auto'))('%s: every line parses as that format', (format) => {
    // Declarative formats need their example pipeline's settings (kv, csv, structuredData).
    const own = resolveSpec(pipelinesOf(path.join(FORMATS, `${format}.yaml`))[0]).parser;
    const parser = new LineParser({ ...own, format, timezone: 'Europe/Istanbul' });
    parser.setReferenceTime(INGEST_MS);
    const results = sampleLines(format).map((line) => {
      const buf = Buffer.from(line, 'utf8');
      const reason = parser.parse(buf, 0, buf.length);
      return reason ?? VENDOR_NAMES[parser.record.format];
    });
    expect(results).toEqual(results.map(() => format));
  });

  it('auto: the mixed sample is detected line by line across the vendor formats', () => {
    const parser = new LineParser({ format: 'auto', timezone: 'Europe/Istanbul' });
    parser.setReferenceTime(INGEST_MS);
    const vendors = sampleLines('auto').map((line) => {
      const buf = Buffer.from(line, 'utf8');
      return parser.parse(buf, 0, buf.length) ?? FORMAT_NAMES[parser.record.format];
    });
    expect(vendors.filter((v) => !(FORMAT_NAMES as readonly string[]).includes(v))).toEqual([]);
    expect(new Set(vendors)).toEqual(new Set(FORMAT_NAMES));
  });
});

describe('examples/firewall.yaml (the quickstart)', () => {
  const objects = load(path.join(EXAMPLES, 'firewall.yaml'));
  const lp = pipelinesOf(path.join(EXAMPLES, 'firewall.yaml'))[0];
  const spec = resolveSpec(lp);

  it('ships every Secret the pipeline references, with the keys it reads, as placeholders', () => {
    const secrets = new Map(
      objects.filter((o) => o.kind === 'Secret').map((s) => [s.metadata?.name, s.stringData ?? {}]),
    );
    const needed: Array<[string, string]> = [];
    const creds = spec.clickhouse.credentials;
    if (creds) needed.push([creds.secretName, creds.usernameKey], [creds.secretName, creds.passwordKey]);
    const sasl = spec.kafka.sasl;
    if (sasl) needed.push([sasl.secretName, sasl.usernameKey], [sasl.secretName, sasl.passwordKey]);
    if (spec.kafka.tls?.caSecretName) needed.push([spec.kafka.tls.caSecretName, spec.kafka.tls.caKey ?? '']);
    if (spec.integrity.signingKey)
      needed.push([spec.integrity.signingKey.secretName, spec.integrity.signingKey.key]);
    expect(
      referencedSecrets(spec)
        .map((r) => r.name)
        .sort(),
    ).toEqual([...new Set(needed.map(([n]) => n))].sort());
    for (const [name, key] of needed)
      expect({ name, key, present: key in (secrets.get(name) ?? {}) }).toEqual({ name, key, present: true });
    // Placeholders only: a real key or password must never land in the repository.
    for (const data of secrets.values())
      for (const v of Object.values(data)) expect(v).toMatch(/CHANGE-ME|REPLACE-WITH|^logpipeline/);
  });

  it('is the compliance quickstart: autoscaling, 90d hot then cold, delete at 730d, DLQ, signed integrity', () => {
    expect(spec.workers.autoscaling.enabled).toBe(true);
    expect(spec.clickhouse.retention.moves).toEqual([{ after: '90d', toVolume: 'cold' }]);
    expect(spec.clickhouse.retention.deleteAfter).toBe('730d');
    expect(spec.deadLetter.enabled).toBe(true);
    expect(spec.integrity.enabled).toBe(true);
    expect(spec.deletionPolicy).toBe('Retain');
  });
});
