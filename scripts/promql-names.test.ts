/** The lexical PromQL name finder the dashboard and alert checks rely on. */
import { promqlLabels, promqlMetrics } from './promql-names';

describe('promqlMetrics', () => {
  it('finds metrics behind functions, aggregations, selectors, ranges and binary operators', () => {
    const expr =
      'histogram_quantile(0.99, sum by (le, target) (rate(a_seconds_bucket{namespace=~"$ns", x="sum(y)"}[$__rate_interval])))' +
      ' / clamp_min(sum(b_total offset 5m), 1) > 0.01 unless on (pipeline) c and absent(up{job="j"} == 1)';
    expect(promqlMetrics(expr)).toEqual(['a_seconds_bucket', 'b_total', 'c', 'up']);
  });

  it('reads the metric of a Grafana label_values query', () => {
    expect(promqlMetrics('label_values(m_total{namespace=~"$namespace"}, pipeline)')).toEqual(['m_total']);
  });

  it('does not mistake numbers with exponents or durations for names', () => {
    expect(promqlMetrics('m > 1e6 and deriv(n[15m]) > 0')).toEqual(['m', 'n']);
  });
});

describe('promqlLabels', () => {
  it('finds matcher and grouping labels, not label values', () => {
    expect(
      promqlLabels(
        'sum by (namespace, pipeline) (rate(m{kind=~"a|b", outcome!="x=y"}[5m])) > 0 unless ignoring(kind) n',
      ),
    ).toEqual(['kind', 'outcome', 'namespace', 'pipeline']);
  });
});
