/**
 * The chart ships the same CRDs the repo's crds/ defines (helm installs them from the chart's
 * crds/ directory): fails on any drift, telling how to fix it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CHART_DIR, REPO_ROOT, renderChart } from './helm';

const SOURCE = path.join(REPO_ROOT, 'crds');
const CHART_CRDS = path.join(CHART_DIR, 'crds');
const FIX = 'run scripts/sync-chart-crds.sh';

function yamlFiles(dir: string): string[] {
  return fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((f) => /\.ya?ml$/.test(f))
        .sort()
    : [];
}

describe('chart CRDs', () => {
  it('are the same files as crds/, byte for byte', () => {
    const files = yamlFiles(SOURCE);
    expect(files.length).toBeGreaterThan(0);
    expect({ chartCrds: yamlFiles(CHART_CRDS), fix: FIX }).toEqual({ chartCrds: files, fix: FIX });
    for (const f of files) {
      const same = fs.readFileSync(path.join(SOURCE, f)).equals(fs.readFileSync(path.join(CHART_CRDS, f)));
      expect({ file: f, identical: same, fix: FIX }).toEqual({ file: f, identical: true, fix: FIX });
    }
  });

  it('define the LogPipeline CRD, and helm renders it with --include-crds', () => {
    const names = yamlFiles(CHART_CRDS).flatMap((f) =>
      parseAllDocuments(fs.readFileSync(path.join(CHART_CRDS, f), 'utf8')).map(
        (d) => d.toJSON()?.metadata?.name,
      ),
    );
    expect(names).toContain('logpipelines.logpipeline.io');
    const rendered = renderChart({}, { includeCrds: true }).filter(
      (o) => o.kind === 'CustomResourceDefinition',
    );
    expect(rendered.map((o) => o.metadata.name).sort()).toEqual([...names].sort());
    // Without --include-crds (the default) the templates never re-emit them.
    expect(renderChart({}).some((o) => o.kind === 'CustomResourceDefinition')).toBe(false);
  });
});
