import { validPipeline } from '../../../test/fixtures/validate-cases';
import { resolveSpec } from '../api/defaults';
import { buildWorkerColumns, resolveTableSchema } from './clickhouse';
import { checkWorkerColumns, workerColumnProblems } from './worker-columns';

function compile(columns: Array<{ name: string; type: string; source?: string }>, preset?: 'custom') {
  const lp = validPipeline();
  lp.spec.clickhouse.columns = columns;
  if (preset) {
    lp.spec.clickhouse.preset = preset;
    lp.spec.clickhouse.partitionBy = undefined;
    lp.spec.clickhouse.orderBy = undefined;
    lp.spec.clickhouse.timeColumn = 'ts';
  }
  const spec = resolveSpec(lp);
  return { spec, columns: buildWorkerColumns(resolveTableSchema(spec)) };
}

describe('the worker column plan compiled by the operator', () => {
  it('accepts the firewall preset and the shared valid pipeline', () => {
    const { spec, columns } = compile(validPipeline().spec.clickhouse.columns!);
    expect(workerColumnProblems(spec, columns)).toEqual([]);
    expect(() => checkWorkerColumns(spec, columns)).not.toThrow();
  });

  it('names the field of a source the type cannot hold, which CEL cannot express', () => {
    const { spec, columns } = compile([
      { name: 'site', type: 'String', source: 'static:site' },
      { name: 'sport_ip', type: 'IPv4', source: 'src_port' },
    ]);
    expect(workerColumnProblems(spec, columns)).toEqual([
      'spec.clickhouse.columns[1].source: column sport_ip: source src_port cannot be written as IPv4: numbers need an integer or String',
    ]);
    expect(() => checkWorkerColumns(spec, columns)).toThrow(
      expect.objectContaining({
        reason: 'InvalidColumns',
        message: expect.stringMatching(/columns\[1\]\.source/),
      }),
    );
  });

  it('names unknown sources and types the encoder cannot write', () => {
    const { spec, columns } = compile(
      [
        { name: 'ts', type: 'DateTime', source: 'timestamp' },
        { name: 'site', type: 'LowCardinality(String)', source: 'srcaddr' },
        { name: 'ratio', type: 'Float64', source: 'field:ratio' },
      ],
      'custom',
    );
    expect(workerColumnProblems(spec, columns)).toEqual([
      'spec.clickhouse.columns[1].source: column site: unknown source "srcaddr"',
      'spec.clickhouse.columns[2].type: unsupported column type for the encoder: Float64',
    ]);
  });
});
