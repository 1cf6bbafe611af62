import { DURATION_PATTERN, parseDuration } from './duration';
import { PIPELINE_RULES, celRulesAt } from './validate-rules';
import { celDurationMs, celDurationMsMirror } from './validate-rules-cel';
import { INGEST_MIRROR_CASES } from '../../../test/fixtures/validate-cases-ingest';

describe('duration grammar shared by the CRD and CEL', () => {
  it.each(['730d', '1d12h', '90m', '500ms', '1h30m15s', '0s', '2d500ms'])('accepts %s', (d) => {
    expect(new RegExp(DURATION_PATTERN).test(d)).toBe(true);
    expect(parseDuration(d)).toBeDefined();
  });

  it.each(['', '2y', '12h1d', '1d1d', '1.5h', 'd', '10', '-1h', '5 m'])('rejects %j', (d) => {
    expect(new RegExp(DURATION_PATTERN).test(d)).toBe(false);
    expect(parseDuration(d)).toBeUndefined();
  });
});

describe('celDurationMs and its mirror', () => {
  it('converts like the CEL expression: days counted apart, the rest as a Go duration', () => {
    expect(celDurationMsMirror('730d')).toBe(730 * 86_400_000);
    expect(celDurationMsMirror('1d12h')).toBe(36 * 3_600_000);
    expect(celDurationMsMirror('1h30m500ms')).toBe(5_400_500);
    expect(celDurationMsMirror('2160h')).toBe(celDurationMsMirror('90d'));
  });

  it('fails where CEL overflows: int64 day milliseconds or a Go duration beyond 2562047h', () => {
    expect(celDurationMsMirror('106751991168d')).toBeUndefined(); // * 86400000 > int64
    expect(celDurationMsMirror('106751991167d')).toBeDefined();
    expect(celDurationMsMirror('106751d')).toBeDefined();
    expect(celDurationMsMirror('2562047h')).toBeDefined();
    expect(celDurationMsMirror('2562048h')).toBeUndefined();
    expect(celDurationMsMirror('not a duration')).toBeUndefined();
  });

  it('builds CEL without string(int), which the apiserver cost estimator treats as unbounded', () => {
    const cel = celDurationMs('self.after');
    expect(cel).not.toMatch(/\bstring\(/);
    expect(cel).toContain(
      "duration('0s' + self.after.substring(self.after.indexOf('d') + 1)).getMilliseconds()",
    );
  });
});

describe('rule table', () => {
  it('has unique ids and one-line messages that name a spec field', () => {
    expect(new Set(PIPELINE_RULES.map((r) => r.id)).size).toBe(PIPELINE_RULES.length);
    for (const r of PIPELINE_RULES) {
      const text = r.message ?? r.messageExpression ?? '';
      expect(text).toMatch(/spec\.[a-zA-Z.[\]]+/);
      expect(text).not.toMatch(/\n/);
      expect(r.message === undefined).toBe(r.messageExpression !== undefined);
    }
  });

  it('marks exactly the rules that use oldSelf as transition rules', () => {
    const transition = PIPELINE_RULES.filter((r) => r.transition).map((r) => r.id);
    expect(transition).toEqual([
      'partitions-never-decrease',
      'topic-name-immutable',
      'consumer-group-immutable',
      'database-immutable',
      'table-immutable',
      'retention-never-shortened',
      'retention-minimum-never-lowered',
    ]);
  });

  it('mirrors each rule in TypeScript (valid and invalid values)', () => {
    const byId = Object.fromEntries(PIPELINE_RULES.map((r) => [r.id, r]));
    const cases: Array<[string, unknown, unknown, boolean]> = [
      ['partitions-never-decrease', { topic: { partitions: 6 } }, {}, true],
      ['partitions-never-decrease', {}, { topic: { partitions: 7 } }, false],
      ['topic-name-immutable', { topic: { name: 'a' } }, { topic: { name: 'a' } }, true],
      ['topic-name-immutable', { topic: {} }, { topic: { name: 'a' } }, false],
      ['consumer-group-immutable', {}, {}, true],
      ['consumer-group-immutable', { consumerGroup: 'g' }, {}, false],
      ['topic-config-keys', { 'min.insync.replicas': '2' }, undefined, true],
      ['topic-config-keys', { 'retention.MS': '1' }, undefined, false],
      ['static-field-names', { _site: 'x' }, undefined, true],
      ['no-credentials-in-url', 'http://ch.logs.svc:8123/?user=x', undefined, true],
      ['no-credentials-in-url', 'http://ch.logs.svc:8123/a@b', undefined, true],
      ['no-credentials-in-url', 'http://u:p@ch.logs.svc:8123', undefined, false],
      ['no-credentials-in-url', 'https://u@ch:8443', undefined, false],
      ['static-field-names', { '1site': 'x' }, undefined, false],
      ['database-immutable', 'a', 'a', true],
      ['table-immutable', 'a', 'b', false],
      ['custom-preset-needs-columns', { preset: 'firewall' }, undefined, true],
      ['custom-preset-needs-columns', { preset: 'custom', columns: [] }, undefined, false],
      ['move-has-one-destination', { after: '1d', toDisk: 'd' }, undefined, true],
      ['move-has-one-destination', { after: '1d' }, undefined, false],
      ['delete-after-later-than-moves', { deleteAfter: '31d', moves: [{ after: '30d' }] }, undefined, true],
      ['delete-after-later-than-moves', { deleteAfter: '30d', moves: [{ after: '720h' }] }, undefined, false],
      ['delete-after-later-than-moves', { deleteAfter: '2y', moves: [{ after: '30d' }] }, undefined, true], // pattern error only
      [
        'delete-after-later-than-moves',
        { deleteAfter: '106751991168d', moves: [{ after: '1d' }] },
        undefined,
        false,
      ], // CEL overflow
      ['retention-above-minimum', { retention: { deleteAfter: '730d' } }, undefined, true],
      ['retention-above-minimum', { retention: { deleteAfter: '729d' } }, undefined, false],
      ['retention-above-minimum', { preset: 'custom', retention: { deleteAfter: '1d' } }, undefined, true],
      [
        'retention-above-minimum',
        { retention: { deleteAfter: '1d', minimumDeleteAfter: '24h' } },
        undefined,
        true,
      ],
      ['retention-never-shortened', { retention: { deleteAfter: '1095d' } }, {}, true],
      ['retention-never-shortened', {}, { retention: { deleteAfter: '1095d' } }, false], // removed: back to 730d
      [
        'retention-never-shortened',
        { retention: { deleteAfter: '30d' } },
        { retention: { deleteAfter: '31d' } },
        false,
      ],
      [
        'retention-never-shortened',
        { retention: { deleteAfter: '30d', allowShortening: true } },
        { retention: { deleteAfter: '31d' } },
        true,
      ],
      ['retention-minimum-never-lowered', { retention: { minimumDeleteAfter: '1d' } }, {}, false],
      ['retention-minimum-never-lowered', { retention: { minimumDeleteAfter: '800d' } }, {}, true],
      [
        'retention-minimum-never-lowered',
        { retention: { minimumDeleteAfter: '1d', allowShortening: true } },
        {},
        true,
      ],
      ['min-replicas-within-max', { minReplicas: 2, maxReplicas: 2 }, undefined, true],
      ['min-replicas-within-max', { minReplicas: 3, maxReplicas: 2 }, undefined, false],
      [
        'max-replicas-within-partitions',
        { kafka: {}, workers: { autoscaling: { maxReplicas: 6 } } },
        undefined,
        true,
      ],
      [
        'max-replicas-within-partitions',
        { kafka: {}, workers: { autoscaling: { maxReplicas: 7 } } },
        undefined,
        false,
      ],
      [
        'min-replicas-within-default-max',
        { kafka: { topic: { partitions: 2 } }, workers: { autoscaling: { minReplicas: 3, maxReplicas: 3 } } },
        undefined,
        true,
      ],
      [
        'min-replicas-within-default-max',
        { kafka: { topic: { partitions: 2 } }, workers: { autoscaling: { minReplicas: 3 } } },
        undefined,
        false,
      ],
      ['replicas-within-partitions', { kafka: {}, workers: { replicas: 0 } }, undefined, true],
      ['replicas-within-partitions', { kafka: {}, workers: { replicas: 7 } }, undefined, false],
      ['replicas-or-autoscaling', { replicas: 2, autoscaling: { enabled: false } }, undefined, true],
      ['replicas-or-autoscaling', { replicas: 2, autoscaling: { enabled: true } }, undefined, false],
      ['integrity-needs-signing-key', { enabled: false }, undefined, true],
      ['integrity-needs-signing-key', { enabled: true }, undefined, false],
      [
        'seal-needs-integrity-and-tsa',
        { enabled: true, tsaUrl: 'https://t', seal: { schedule: 'daily' } },
        undefined,
        true,
      ],
      ['seal-needs-integrity-and-tsa', { enabled: true, seal: { schedule: 'daily' } }, undefined, false],
      [
        'seal-needs-integrity-and-tsa',
        { tsaUrl: 'https://t', seal: { schedule: 'daily' } },
        undefined,
        false,
      ],
      ['reserved-worker-env', { env: [{ name: 'NODE_OPTIONS', value: 'x' }] }, undefined, true],
      ['reserved-worker-env', { env: [{ name: 'LP_CLICKHOUSE_URL', value: 'http://x' }] }, undefined, false],
      ['declarative-format-settings', { format: 'kv', kv: { fields: {} } }, undefined, true],
      ['declarative-format-settings', { format: 'csv' }, undefined, false],
      ['kv-format', { pairDelimiter: ';', fields: { src_ip: ['s'] } }, undefined, true],
      ['kv-format', { keyValueDelimiter: ' ', fields: {} }, undefined, false],
      ['sd-field-columns', { sdId: 'a@1', fields: { nat_src_port: ['p'] } }, undefined, true],
      ['sd-field-columns', { sdId: 'a@1', fields: { raw: ['r'] } }, undefined, false],
      ['column-source-known', { name: 'a', type: 'String' }, undefined, true],
      ['column-source-known', { name: 'a', type: 'String', source: 'src_ip' }, undefined, true],
      ['column-source-known', { name: 'a', type: 'String', source: 'static:site' }, undefined, true],
      ['column-source-known', { name: 'a', type: 'String', source: 'field:devname' }, undefined, true],
      ['column-source-known', { name: 'a', type: 'String', source: 'srcaddr' }, undefined, false],
      ['csv-format', { layoutField: 1, layouts: { T: { dst_ip: 3 } } }, undefined, true],
      ['csv-format', { delimiter: '"', fields: { src_ip: 0 } }, undefined, false],
      ['parser-rule-shape', { match: { prefix: 'X' }, kv: { fields: {} } }, undefined, true],
      ['parser-rule-shape', { kv: { fields: {} } }, undefined, false],
      ...INGEST_MIRROR_CASES,
    ];
    for (const [id, self, old, ok] of cases) expect([id, byId[id].holds(self, old)]).toEqual([id, ok]);
    expect(new Set(cases.map((c) => c[0])).size).toBe(PIPELINE_RULES.length);
  });

  it('explains dynamic messages with the offending numbers', () => {
    const rule = PIPELINE_RULES.find((r) => r.id === 'partitions-never-decrease')!;
    expect(rule.explain({}, { topic: { partitions: 12 } })).toBe(
      'spec.kafka.topic.partitions may only grow (12 -> 6): Kafka cannot remove partitions from a topic',
    );
  });

  it('lists the CEL of a location in table order, without the mirror functions', () => {
    expect(celRulesAt('spec.kafka').map((r) => r.fieldPath)).toEqual([
      '.topic.partitions',
      '.topic.name',
      '.consumerGroup',
    ]);
    expect(Object.keys(celRulesAt('spec.integrity')[0]).sort()).toEqual([
      'fieldPath',
      'message',
      'reason',
      'rule',
    ]);
  });
});
