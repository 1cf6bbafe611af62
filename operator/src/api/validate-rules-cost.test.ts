import { PIPELINE_RULES } from './validate-rules';
import { celLet } from './validate-rules-cel';

/**
 * The apiserver evaluates every CEL rule of the CRD on every write of a LogPipeline (status writes
 * included) and copies a schema node's property table on each field step, so field steps are the
 * cost (issue 18). These counters pin that composites are bound once instead of repeated.
 */
const steps = (rule: string) => rule.match(/\b(?:self|oldSelf)\./g)?.length ?? 0;
const rule = (id: string) => PIPELINE_RULES.find((r) => r.id === id)!.rule;

describe('CEL field steps per LogPipeline write', () => {
  it('binds a value once with a one-element list', () => {
    expect(celLet('self.kafka', 'kafka', 'kafka.topic.partitions > 0')).toBe(
      '[self.kafka].all(kafka, kafka.topic.partitions > 0)',
    );
  });

  it.each([
    // [rule, field steps]: each side's default resolved once (45 to 73 steps each before binding).
    ['retention-above-minimum', 8],
    ['retention-never-shortened', 9],
    ['retention-minimum-never-lowered', 13],
  ])('%s names its retention values once per side (%i steps)', (id, n) => {
    expect(steps(rule(id))).toBe(n);
  });

  it.each([
    // spec.kafka stepped into once per rule (was three times).
    ['max-replicas-within-partitions', 4],
    ['min-replicas-within-default-max', 4],
    ['replicas-within-partitions', 4],
  ])('%s reads the partition count through one step into spec.kafka (%i steps)', (id, n) => {
    expect(steps(rule(id))).toBe(n);
    expect(rule(id).match(/self\.kafka/g)).toHaveLength(1);
  });

  it('keeps the whole rule set at or under 211 field steps (364 before binding)', () => {
    const total = PIPELINE_RULES.reduce((sum, r) => sum + steps(r.rule), 0);
    expect(total).toBeLessThanOrEqual(211);
  });
});
