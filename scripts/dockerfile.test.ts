/**
 * The images, checked without a Docker engine: the Dockerfile copies only paths that exist (or
 * that tsc produces from existing sources), the runtime runs as a numeric non-root UID with
 * production dependencies only, the entry points exist, and the names/versions match the chart.
 */
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { parse } from 'yaml';
import { DEFAULT_WORKER_IMAGE } from '../operator/src/api/defaults';
import {
  ancestry,
  effective,
  labels,
  parseAssignments,
  parseDockerfile,
  shippedTrees,
  stage,
  type Stage,
} from './dockerfile-parse';
import { CHART_DIR, REPO_ROOT } from './helm';
import { OPERATOR_ENV, OPERATOR_NODE_ARGS } from './operator-runtime';
import { WORKER_NODE_ARGS } from '../common/src/worker-runtime';

const df = parseDockerfile(fs.readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8'));
const dockerignore = fs
  .readFileSync(path.join(REPO_ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim());
const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  version: string;
  engines: { node: string };
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const lock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { dev?: boolean; hasInstallScript?: boolean }>;
};
const chart = parse(fs.readFileSync(path.join(CHART_DIR, 'Chart.yaml'), 'utf8')) as { appVersion: string };
const values = parse(fs.readFileSync(path.join(CHART_DIR, 'values.yaml'), 'utf8')) as {
  image: { repository: string };
  worker: { image: { repository: string } };
  podSecurityContext: { runAsUser: number; runAsGroup: number };
};

const IMAGES = [
  {
    target: 'operator',
    repository: values.image.repository,
    entry: 'dist/operator/src/main.js',
    trees: ['common/src', 'operator/src'],
    nodeArgs: OPERATOR_NODE_ARGS,
    env: OPERATOR_ENV,
  },
  {
    target: 'worker',
    repository: values.worker.image.repository,
    entry: 'dist/consumer/src/main.js',
    trees: ['common/src', 'consumer/src'],
    nodeArgs: WORKER_NODE_ARGS,
    env: {} as Readonly<Record<string, string>>,
  },
];

/** A file tsc emits under dist/ maps back to its source (rootDir ".", outDir "dist"). */
function sourceOf(distPath: string): string {
  return distPath.replace(/^dist\//, '').replace(/\.js$/, '.ts');
}

function workdir(s: Stage): string {
  const w = effective(df, s, 'WORKDIR');
  if (!w) throw new Error(`stage ${s.name} has no WORKDIR`);
  return w.args[0];
}

function copies(s: Stage): Array<{ from?: string; sources: string[]; dest: string }> {
  return s.instructions
    .filter((i) => i.keyword === 'COPY')
    .map((i) => ({ from: i.flags.from, sources: i.args.slice(0, -1), dest: i.args[i.args.length - 1] }));
}

describe('Dockerfile', () => {
  it('copies from the build context only paths that exist and that .dockerignore lets through', () => {
    const contextSources = df.stages.flatMap((s) =>
      copies(s)
        .filter((c) => !c.from)
        .flatMap((c) => c.sources),
    );
    expect(contextSources.length).toBeGreaterThan(0);
    for (const src of contextSources) {
      expect(fs.existsSync(path.join(REPO_ROOT, src))).toBe(true);
      expect(dockerignore).toContain(`!${src}`);
    }
    expect(dockerignore[dockerignore.indexOf('*')]).toBe('*'); // allowlist: everything else stays out
    expect(dockerignore).toContain('**/*.test.ts');
  });

  it('copies from the build stages only what they produce: dist/ of copied sources, prod node_modules', () => {
    for (const s of df.stages) {
      for (const c of copies(s).filter((x) => x.from)) {
        const from = stage(df, c.from!);
        const fromContext = copies(from).flatMap((x) => x.sources);
        for (const src of c.sources) {
          expect(src.startsWith(`${workdir(from)}/`)).toBe(true);
          const rel = src.slice(workdir(from).length + 1);
          if (rel.startsWith('dist/')) {
            expect(fromContext).toContain(sourceOf(rel));
            expect(fs.existsSync(path.join(REPO_ROOT, sourceOf(rel)))).toBe(true);
          } else if (rel === 'node_modules') {
            expect(
              from.instructions.some(
                (i) => i.keyword === 'RUN' && /npm (ci|install)\b.*--omit=dev/.test(i.raw),
              ),
            ).toBe(true);
          } else {
            expect(fromContext).toContain(rel);
          }
        }
      }
    }
  });

  it.each(IMAGES)(
    '$target image: non-root numeric USER, prod deps only, existing entry point',
    ({ target, entry, nodeArgs, env: extraEnv }) => {
      const s = stage(df, target);
      const chain = ancestry(df, s);
      const user = effective(df, s, 'USER')?.args[0] ?? '';
      expect(user).toMatch(/^[0-9]+(:[0-9]+)?$/);
      const [uid, gid] = user.split(':').map(Number);
      expect(uid).toBeGreaterThan(0);
      // The chart's pod securityContext must name the same identity the image runs as.
      expect(uid).toBe(values.podSecurityContext.runAsUser);
      expect(gid).toBe(values.podSecurityContext.runAsGroup);
      // Nothing in the final image installs packages, and its node_modules come from the --omit=dev stage.
      expect(chain.flatMap((st) => st.instructions).filter((i) => i.keyword === 'RUN')).toEqual([]);
      const modules = chain.flatMap(copies).filter((c) => c.sources.some((x) => x.endsWith('/node_modules')));
      expect(modules.map((c) => c.from)).toEqual(['prod-deps']);
      const entrypoint = effective(df, s, 'ENTRYPOINT')?.args ?? [];
      expect(entrypoint).toEqual(['/nodejs/bin/node', ...nodeArgs, entry]);
      const envs = chain.flatMap((st) => st.instructions).filter((i) => i.keyword === 'ENV');
      const env = Object.assign({}, ...envs.map((i) => parseAssignments(i.args))) as Record<string, string>;
      for (const [k, v] of Object.entries(extraEnv)) expect(env[k]).toBe(v);
      const shipped = chain
        .flatMap(copies)
        .map((c) => c.sources[0].replace(`${workdir(stage(df, 'build'))}/`, ''));
      expect(shipped.some((p) => entry.startsWith(`${p}/`))).toBe(true);
      // Last, so everything above is checked even before the entry point is written.
      expect({
        source: sourceOf(entry),
        exists: fs.existsSync(path.join(REPO_ROOT, sourceOf(entry))),
      }).toEqual({
        source: sourceOf(entry),
        exists: true,
      });
    },
  );

  it.each(IMAGES)('$target image: ships only its own tree and the shared layer', ({ target, trees }) => {
    const shipped = shippedTrees(df, target);
    expect([...shipped].sort()).toEqual(trees);
    // Spelled out: the worker carries no operator code, the operator no worker code, neither the CLI.
    const other = target === 'worker' ? 'operator/' : 'consumer/';
    expect(shipped.filter((t) => t.startsWith(other) || t === 'operator/cli')).toEqual([]);
  });

  it('compiles the images with tsconfig.build.json (no tests, no fixtures)', () => {
    const runs = stage(df, 'build').instructions.filter((i) => i.keyword === 'RUN' && /\btsc\b/.test(i.raw));
    expect(runs.map((i) => i.raw)).toEqual(['npx tsc -p tsconfig.build.json']);
  });

  it.each(IMAGES)(
    '$target image: labels name the chart default image and version',
    ({ target, repository }) => {
      const l = labels(df, stage(df, target));
      expect(l['org.opencontainers.image.title']).toBe(repository.split('/').pop());
      expect(l['org.opencontainers.image.ref.name']).toBe(repository);
      const versionArg = parseAssignments(
        stage(df, 'runtime').instructions.find((i) => i.keyword === 'ARG')!.args,
      ).VERSION;
      expect(l['org.opencontainers.image.version']).toBe('${VERSION}');
      expect(versionArg).toBe(chart.appVersion);
      expect(versionArg).toBe(pkg.version);
    },
  );

  it('builds and runs on the Node major the tests run on (.node-version, engines)', () => {
    const major = fs.readFileSync(path.join(REPO_ROOT, '.node-version'), 'utf8').trim().split('.')[0];
    expect(df.globalArgs.NODE_IMAGE).toBe(`node:${major}-bookworm-slim`);
    expect(df.globalArgs.RUNTIME_IMAGE).toMatch(
      new RegExp(`^gcr\\.io/distroless/nodejs${major}-debian\\d+:nonroot$`),
    );
    expect(pkg.engines.node).toBe(`>=${major}`);
  });

  it("agrees with the operator's built-in worker image default", () => {
    expect(DEFAULT_WORKER_IMAGE).toBe(`${values.worker.image.repository}:${chart.appVersion}`);
  });
});

describe('production dependencies', () => {
  it('need no install scripts (the image runs npm ci --ignore-scripts) and exclude chdb', () => {
    const scripted = Object.entries(lock.packages).filter(
      ([name, p]) => name && p.hasInstallScript && !p.dev,
    );
    expect(scripted).toEqual([]);
    expect(pkg.devDependencies.chdb).toBeDefined();
    expect(pkg.dependencies.chdb).toBeUndefined();
    expect(lock.packages['node_modules/chdb']?.dev).toBe(true);
  });

  it.each(IMAGES)(
    'cover every runtime import of the $target image (no dev-only or out-of-image imports)',
    ({ trees }) => {
      const allowed = new Set([...Object.keys(pkg.dependencies), ...builtinModules]);
      const problems: string[] = [];
      let scanned = 0;
      for (const root of trees) {
        for (const file of listSources(path.join(REPO_ROOT, root))) {
          for (const spec of runtimeImports(fs.readFileSync(file, 'utf8'))) {
            const rel = path.relative(REPO_ROOT, file);
            scanned += 1;
            if (spec.startsWith('.')) {
              const target = path.relative(REPO_ROOT, path.resolve(path.dirname(file), spec));
              if (!trees.some((r) => target.startsWith(`${r}/`)))
                problems.push(`${rel} imports ${spec} (outside the image)`);
            } else if (!allowed.has(packageName(spec))) {
              problems.push(`${rel} imports ${spec} (not a production dependency)`);
            }
          }
        }
      }
      expect(problems).toEqual([]);
      expect(scanned).toBeGreaterThan(20);
    },
  );
});

function listSources(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter(
      (e) =>
        e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts'),
    )
    .map((e) => path.join(e.parentPath, e.name));
}

/** Module specifiers that survive compilation (type-only imports are erased by tsc). */
function runtimeImports(source: string): string[] {
  const out: string[] = [];
  const re =
    /^\s*(?:import|export)\s+(type\s+)?(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]|\b(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/gm;
  for (let m = re.exec(source); m; m = re.exec(source)) {
    if (m[1]) continue;
    out.push(m[2] ?? m[3]);
  }
  return out;
}

function packageName(spec: string): string {
  const bare = spec.replace(/^node:/, '');
  return bare.startsWith('@') ? bare.split('/').slice(0, 2).join('/') : bare.split('/')[0];
}
