/**
 * Writes the LogPipeline CRD rendered from the TypeScript schema (operator/src/api/schema-*.ts and
 * validate-rules.ts) to crds/, then copies it into the Helm chart (scripts/sync-chart-crds.sh).
 * `npm run crd:generate` runs it from dist/; operator/src/api/schema.test.ts and
 * scripts/chart-crds.test.ts fail while either committed copy differs from what this renders.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { renderCrdYaml } from '../operator/src/api/schema-crd';
import { CRD_FILE } from '../operator/src/api/schema';
import { REPO_ROOT } from './helm';

if (require.main === module) {
  const text = renderCrdYaml();
  const changed = !fs.existsSync(CRD_FILE) || fs.readFileSync(CRD_FILE, 'utf8') !== text;
  if (changed) fs.writeFileSync(CRD_FILE, text);
  const rel = path.relative(REPO_ROOT, CRD_FILE);
  process.stdout.write(`${changed ? 'wrote' : 'unchanged'} ${rel} (${text.length} bytes)\n`);
  execFileSync('bash', [path.join(REPO_ROOT, 'scripts', 'sync-chart-crds.sh')], { stdio: 'inherit' });
}
