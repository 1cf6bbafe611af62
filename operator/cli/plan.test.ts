import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { stringify } from 'yaml';
import { validPipeline } from '../../test/fixtures/validate-cases';
import { planPipeline, runPlan } from './plan';

function collect(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

describe('planPipeline', () => {
  it('prints the topic, DDL and Kubernetes objects of a valid pipeline', () => {
    const plan = planPipeline(validPipeline());
    expect(plan.valid).toBe(true);
    expect(plan.topic).toMatchObject({ topic: 'firewall.logs', numPartitions: 12 });
    expect(plan.clickhouse?.some((s) => s.startsWith('CREATE TABLE IF NOT EXISTS `logs`.`firewall`'))).toBe(
      true,
    );
    const kinds = (plan.kubernetes as Array<{ kind: string }>).map((o) => o.kind);
    expect(kinds).toEqual(['ConfigMap', 'Deployment', 'PodDisruptionBudget']);
  });

  it('reports admission errors with the field and reason', () => {
    const lp = validPipeline();
    lp.spec.clickhouse.table = 'fw; DROP TABLE x';
    const plan = planPipeline(lp);
    expect(plan.valid).toBe(false);
    expect(plan.errors.join('\n')).toMatch(/spec\.clickhouse\.table/);
  });

  it('refuses credentials inside the ClickHouse URL and never prints them in a plan', () => {
    const lp = validPipeline();
    lp.spec.clickhouse.url = 'http://writer:s3cret@clickhouse.logs.svc:8123';
    const plan = planPipeline(lp);
    expect(plan.valid).toBe(false);
    expect(plan.errors.join('\n')).toMatch(/spec\.clickhouse\.url.*must not contain credentials/);
    expect(JSON.stringify(plan.kubernetes ?? [])).not.toContain('s3cret');
  });
});

describe('runPlan', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plan-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('exits 0 with JSON output for valid input and 1 for invalid input', async () => {
    const good = path.join(dir, 'good.yaml');
    fs.writeFileSync(good, stringify(validPipeline()));
    const out = collect();
    const err = collect();
    expect(await runPlan(['-f', good, '-o', 'json'], out.stream, err.stream)).toBe(0);
    expect(JSON.parse(out.text())[0]).toMatchObject({ pipeline: 'default/fw', valid: true });

    const lp = validPipeline();
    lp.spec.workers = { autoscaling: { enabled: true, minReplicas: 5, maxReplicas: 2 } };
    const bad = path.join(dir, 'bad.yaml');
    fs.writeFileSync(bad, stringify(lp));
    const out2 = collect();
    expect(await runPlan(['-f', bad], out2.stream, err.stream)).toBe(1);
    expect(out2.text()).toMatch(/invalid/);
  });

  it('applies the update rules against --previous: a shortened retention is refused without the override', async () => {
    const live = validPipeline();
    live.spec.clickhouse.retention!.deleteAfter = '1095d';
    const previous = path.join(dir, 'live.yaml');
    fs.writeFileSync(previous, stringify({ apiVersion: 'v1', kind: 'List', items: [live] }));
    const next = validPipeline();
    next.spec.clickhouse.retention!.deleteAfter = '800d';
    const file = path.join(dir, 'next.yaml');
    fs.writeFileSync(file, stringify(next));
    const out = collect();
    expect(await runPlan(['-f', file, '--previous', previous], out.stream, collect().stream)).toBe(1);
    expect(out.text()).toMatch(/retention.deleteAfter may not be shortened.*allowShortening/);
    // Without the stored object the same file is a valid creation.
    expect(await runPlan(['-f', file], collect().stream, collect().stream)).toBe(0);
    next.spec.clickhouse.retention!.allowShortening = true;
    fs.writeFileSync(file, stringify(next));
    expect(await runPlan(['-f', file, '--previous', previous], collect().stream, collect().stream)).toBe(0);
  });

  it('exits 2 on usage errors', async () => {
    const err = collect();
    expect(await runPlan([], collect().stream, err.stream)).toBe(2);
    expect(err.text()).toMatch(/-f <file>/);
  });
});

describe('planPipeline: the worker column plan', () => {
  it('refuses a source the column type cannot hold, naming the field', async () => {
    const lp = validPipeline();
    lp.spec.clickhouse.columns = [{ name: 'sport_ip', type: 'IPv4', source: 'src_port' }];
    const plan = planPipeline(lp);
    expect(plan.valid).toBe(false);
    expect(plan.errors).toEqual([
      'InvalidColumns: spec.clickhouse.columns[0].source: column sport_ip: source src_port cannot be written as IPv4: numbers need an integer or String',
    ]);
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'plan-cols-')), 'lp.yaml');
    fs.writeFileSync(file, stringify(lp));
    const out = collect();
    expect(await runPlan(['-f', file], out.stream, collect().stream)).toBe(1);
    expect(out.text()).toMatch(/columns\[0\]\.source.*cannot be written as IPv4/);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });

  it('refuses an unknown source as admission does', () => {
    const lp = validPipeline();
    lp.spec.clickhouse.columns = [{ name: 'site', type: 'LowCardinality(String)', source: 'srcaddr' }];
    const plan = planPipeline(lp);
    expect(plan.valid).toBe(false);
    expect(plan.errors.join('\n')).toMatch(
      /spec\.clickhouse\.columns\[0\]\.source: Invalid value.*must be one of/,
    );
  });
});
