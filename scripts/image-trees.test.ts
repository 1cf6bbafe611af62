/**
 * What each image's code needs, asked of the real compiler: the files tsc pulls in when it compiles
 * only the trees an image ships (from tsconfig.build.json, following every import, type-only ones
 * included) all lie inside those trees. So the worker image runs without the operator's code, the
 * operator image without the worker's, and neither carries a test or fixture.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { parseDockerfile, shippedTrees } from './dockerfile-parse';
import { REPO_ROOT } from './helm';

const df = parseDockerfile(fs.readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8'));

/** tsconfig.build.json as tsc reads it (extends resolved, include/exclude expanded). */
function buildConfig(): ts.ParsedCommandLine {
  const parsed = ts.getParsedCommandLineOfConfigFile(path.join(REPO_ROOT, 'tsconfig.build.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  if (!parsed || parsed.errors.length) throw new Error('tsconfig.build.json does not parse');
  return parsed;
}

/** Repository-relative paths of the project's own files a program over `roots` loads. */
function loadedFiles(roots: string[], options: ts.CompilerOptions): string[] {
  const program = ts.createProgram({ rootNames: roots, options });
  return program
    .getSourceFiles()
    .map((f) => path.relative(REPO_ROOT, f.fileName))
    .filter((f) => !f.startsWith('node_modules/') && !f.startsWith('..'));
}

const within = (file: string, trees: string[]) => trees.some((t) => file.startsWith(`${t}/`));

const config = buildConfig();
const sources = config.fileNames.map((f) => path.relative(REPO_ROOT, f));

describe('tsconfig.build.json (what the images compile)', () => {
  it('compiles the shared layer, the operator, the CLI and the worker, without tests or fixtures', () => {
    const trees = ['common/src', 'operator/src', 'operator/cli', 'consumer/src'];
    for (const t of trees) expect(sources.some((f) => f.startsWith(`${t}/`))).toBe(true);
    expect(sources.filter((f) => !within(f, trees))).toEqual([]);
    expect(sources.filter((f) => f.endsWith('.test.ts'))).toEqual([]);
    // Following imports must not reach a fixture or the test bed either.
    expect(loadedFiles(config.fileNames, config.options).filter((f) => !within(f, trees))).toEqual([]);
  });
});

describe.each(['operator', 'worker'])('%s image', (target) => {
  const trees = shippedTrees(df, target);

  it('compiled alone from the trees it ships, loads nothing outside them', () => {
    expect(trees).toContain('common/src');
    const roots = config.fileNames.filter((f) => within(path.relative(REPO_ROOT, f), trees));
    expect(roots.length).toBeGreaterThan(20);
    const outside = loadedFiles(roots, config.options).filter((f) => !within(f, trees));
    expect(outside).toEqual([]);
  });
});

describe('common/src', () => {
  it('compiled alone, loads nothing from the operator, the CLI or the worker', () => {
    const roots = config.fileNames.filter((f) => within(path.relative(REPO_ROOT, f), ['common/src']));
    expect(roots.length).toBeGreaterThan(5);
    expect(loadedFiles(roots, config.options).filter((f) => !within(f, ['common/src']))).toEqual([]);
  });
});

describe('npm package (how the logpipeline CLI ships)', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
    files: string[];
    bin: Record<string, string>;
    scripts: Record<string, string>;
  };

  it('packs the compiled sources of tsconfig.build.json and the CRD, never tests or fixtures', () => {
    expect(pkg.scripts.prepack).toBe('tsc -p tsconfig.build.json');
    const included = pkg.files.filter((f) => !f.startsWith('!'));
    expect(included.sort()).toEqual(
      ['crds', 'dist/common/src', 'dist/consumer/src', 'dist/operator/cli', 'dist/operator/src'].sort(),
    );
    expect(pkg.files).toContain('!dist/**/*.test.js');
    expect(Object.values(pkg.bin)).toEqual(['dist/operator/cli/main.js']);
    expect(sources).toContain('operator/cli/main.ts');
  });
});
