import { VALID_CASES, materialize, validPipeline } from '../../../test/fixtures/validate-cases';
import { INVALID_CASES } from '../../../test/fixtures/validate-cases-invalid';
import { RULES_NOT_CHECKED, formatValidationError, validatePipeline } from './validate';
import { PIPELINE_RULES } from './validate-rules';

const summary = (errs: ReturnType<typeof validatePipeline>) =>
  errs.map((e) => ({ field: e.field, type: e.type, ...(e.rule ? { rule: e.rule } : {}) }));

describe('validatePipeline: shared examples', () => {
  it.each(VALID_CASES.map((c) => [c.name, c] as const))('accepts %s', (_n, c) => {
    const { before, object } = materialize(c);
    expect(validatePipeline(object, before).map(formatValidationError)).toEqual([]);
  });

  it.each(INVALID_CASES.map((c) => [c.name, c] as const))('rejects %s', (_n, c) => {
    const { before, object } = materialize(c);
    const errs = validatePipeline(object, before);
    const expected = c.expect.map((e) => ({ ...e, ...(e.rule ? { rule: e.rule } : {}) }));
    // Blocking schema errors add the apiserver's "rules not checked" note after them.
    const withoutNote = summary(errs).filter((e) => e.field !== '');
    expect(withoutNote).toEqual(expect.arrayContaining(expected));
    expect(withoutNote).toHaveLength(expected.length);
  });

  it('has an invalid example for every cross-field rule', () => {
    const covered = new Set(INVALID_CASES.flatMap((c) => c.expect.map((e) => e.rule)));
    expect(PIPELINE_RULES.map((r) => r.id).filter((id) => !covered.has(id))).toEqual([]);
  });

  it('does not report update rules without the stored object', () => {
    const c = INVALID_CASES.find((x) => x.name === 'database changed on update')!;
    expect(validatePipeline(materialize(c).object)).toEqual([]);
  });
});

describe('validatePipeline: messages as the apiserver words them', () => {
  const lp = () => validPipeline() as unknown as { spec: Record<string, any>; [k: string]: unknown }; // eslint-disable-line @typescript-eslint/no-explicit-any

  it('words pattern, type, enum, length and count errors like kube-openapi', () => {
    const x = lp();
    x.spec.clickhouse.database = 'a;b';
    expect(validatePipeline(x).map(formatValidationError)).toEqual([
      `spec.clickhouse.database: Invalid value: "a;b": spec.clickhouse.database in body should match '^[A-Za-z_][A-Za-z0-9_]{0,62}$'`,
    ]);
    const y = lp();
    y.spec.kafka.topic.partitions = 'x';
    y.spec.deletionPolicy = 'Foo';
    y.spec.clickhouse.table = 'a'.repeat(70);
    y.spec.kafka.bootstrapServers = Array(40).fill('a:1');
    expect(validatePipeline(y).map(formatValidationError)).toEqual([
      'spec.kafka.bootstrapServers: Too many: 40: must have at most 32 items',
      'spec.kafka.topic.partitions: Invalid value: "string": spec.kafka.topic.partitions in body must be of type integer: "string"',
      'spec.clickhouse.table: Too long: may not be more than 51 bytes',
      'spec.deletionPolicy: Unsupported value: "Foo": supported values: "Retain", "Delete"',
      `<nil>: Invalid value: null: ${RULES_NOT_CHECKED}`,
    ]);
  });

  it('words bounds, minItems, required and duplicates', () => {
    const x = lp();
    x.spec.kafka.topic.replicationFactor = 0;
    x.spec.parser.maxLineBytes = 1 << 30;
    x.spec.kafka.bootstrapServers = [];
    x.spec.clickhouse.columns = [
      { name: 'a', type: 'String' },
      { name: 'a', type: 'String' },
    ];
    expect(validatePipeline(x).map(formatValidationError)).toEqual([
      'spec.kafka.bootstrapServers: Invalid value: 0: spec.kafka.bootstrapServers in body should have at least 1 items',
      'spec.kafka.topic.replicationFactor: Invalid value: 0: spec.kafka.topic.replicationFactor in body should be greater than or equal to 1',
      'spec.parser.maxLineBytes: Invalid value: 1073741824: spec.parser.maxLineBytes in body should be less than or equal to 16777216',
      'spec.clickhouse.columns[1]: Duplicate value: {"name":"a"}',
    ]);
    const y = lp();
    delete y.spec.clickhouse;
    expect(validatePipeline(y).map(formatValidationError)).toEqual([
      'spec.clickhouse: Required value',
      `<nil>: Invalid value: null: ${RULES_NOT_CHECKED}`,
    ]);
  });

  it('words cross-field rules with the rule message, the node type and the fieldPath', () => {
    const x = lp();
    x.spec.workers.autoscaling.maxReplicas = 20;
    expect(validatePipeline(x).map(formatValidationError)).toEqual([
      'spec.workers.autoscaling.maxReplicas: Invalid value: "object": spec.workers.autoscaling.maxReplicas (20) must not exceed spec.kafka.topic.partitions (12): a consumer group cannot use more consumers than partitions',
    ]);
    const old = validPipeline();
    const y = validPipeline();
    y.spec.kafka.topic!.partitions = 8;
    y.spec.workers!.autoscaling!.maxReplicas = 8;
    y.spec.clickhouse.table = 'other';
    expect(validatePipeline(y, old).map(formatValidationError)).toEqual([
      'spec.kafka.topic.partitions: Invalid value: "object": spec.kafka.topic.partitions may only grow (12 -> 8): Kafka cannot remove partitions from a topic',
      'spec.clickhouse.table: Forbidden: spec.clickhouse.table is immutable: it holds the retained logs; create a new LogPipeline to write elsewhere',
    ]);
  });

  it('reports unknown fields like strict field validation, but not inside embedded core types', () => {
    const x = lp();
    x.spec.kafka.topic.partitons = 3;
    x.spec.workers.env = [{ name: 'A', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }];
    x.spec.workers.affinity = { nodeAffinity: { anything: true } };
    expect(validatePipeline(x).map(formatValidationError)).toEqual([
      'unknown field "spec.kafka.topic.partitons"',
    ]);
  });

  it('accepts quantities as integers or strings and rejects malformed ones', () => {
    const x = lp();
    x.spec.workers.resources = { requests: { cpu: 2, memory: '1.5Gi' }, limits: { memory: '1 GB' } };
    expect(validatePipeline(x).map((e) => e.field)).toEqual(['spec.workers.resources.limits.memory']);
  });

  it('checks apiVersion, kind and metadata.name', () => {
    const x = lp();
    x.apiVersion = 'logpipeline.io/v1';
    x.kind = 'Pipeline';
    x.metadata = { name: 'Bad_Name' };
    expect(validatePipeline(x).map((e) => `${e.field} ${e.type}`)).toEqual([
      'apiVersion FieldValueNotSupported',
      'kind FieldValueNotSupported',
      'metadata.name FieldValueInvalid',
    ]);
    expect(validatePipeline({ ...lp(), metadata: {} }).map((e) => e.field)).toEqual(['metadata.name']);
    expect(validatePipeline('nope')).toEqual([expect.objectContaining({ type: 'FieldValueTypeInvalid' })]);
    expect(validatePipeline(null)).toHaveLength(1);
  });
});
