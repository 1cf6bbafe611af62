import { Registry } from 'prom-client';
import { labelText, PipelineSeriesRegistry, RowFamily } from './pipeline-series';

interface Row {
  labels: string;
  values: Map<string, number>;
}

function family(registry: Registry, rows: Row[]) {
  return new RowFamily<Row>(
    'x_state',
    'State by kind.\nSecond line.',
    ['namespace', 'name', 'kind'],
    {
      rows: () => rows,
      labels: (r) => r.labels,
      values: (r, emit) => {
        for (const [extra, v] of r.values) emit(extra, v);
      },
    },
    [registry],
  );
}

describe('RowFamily', () => {
  const rows: Row[] = [
    { labels: labelText({ namespace: 'ns', name: 'a"b\\c\nd' }), values: new Map([[',kind="x"', 1]]) },
    {
      labels: labelText({ namespace: 'ns', name: 'e' }),
      values: new Map([
        ['', NaN],
        [',kind="y"', -Infinity],
      ]),
    },
  ];

  it('renders the text format itself, with the same lines as prom-client would', async () => {
    const fast = new PipelineSeriesRegistry();
    const plain = new Registry();
    family(fast, rows);
    family(plain, rows);
    const text = await fast.metrics();
    expect(text).toBe(
      [
        '# HELP x_state State by kind.\\nSecond line.',
        '# TYPE x_state gauge',
        'x_state{namespace="ns",name="a\\"b\\\\c\\nd",kind="x"} 1',
        'x_state{namespace="ns",name="e"} Nan',
        'x_state{namespace="ns",name="e",kind="y"} -Inf',
        '',
      ].join('\n'),
    );
    // A registry that formats by itself reads the same series through get().
    expect(await plain.metrics()).toBe(text);
  });

  it('answers getMetricsAsJSON with labels and values', async () => {
    const registry = new PipelineSeriesRegistry();
    family(registry, rows);
    const [json] = await registry.getMetricsAsJSON();
    expect(json.values).toEqual([
      { labels: { namespace: 'ns', name: 'a"b\\c\nd', kind: 'x' }, value: 1 },
      { labels: { namespace: 'ns', name: 'e' }, value: NaN },
      { labels: { namespace: 'ns', name: 'e', kind: 'y' }, value: -Infinity },
    ]);
  });
});
