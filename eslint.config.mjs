import tseslint from 'typescript-eslint';

// Layers (docs/architecture.md). common/src is the contract both sides obey and imports neither;
// operator/src and consumer/src import only common/src and their own files; the CLI
// (operator/cli) may import all. Inside each side a layer imports only the layers before it.
const SIDES = {
  'common/src': ['operator', 'consumer', 'test'],
  'operator/src': ['consumer', 'operator/cli', 'test'],
  'consumer/src': ['operator', 'test'],
};
const LAYERS = {
  'operator/src': [
    ['api'],
    ['desired'],
    ['apply'],
    ['autoscale', 'compliance', 'observability', 'status'],
    ['controller'],
    ['main'],
  ],
  'consumer/src': [
    ['parse'],
    ['encode'],
    ['delivery'],
    ['sink'],
    ['integrity'],
    ['observability'],
    // ingest: the syslog receiver, an entry point beside the worker (shares its lifecycle parts).
    [
      'main',
      'termination',
      'worker',
      'worker-batches',
      'worker-hooks',
      'worker-parts',
      'worker-tuning',
      'ingest',
    ],
  ],
};

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** A pattern forbidding imports whose path passes through one of `dirs` (e.g. ../../consumer/src/x). */
function crossSide(side, forTests = false) {
  const dirs = SIDES[side].filter((dir) => !(forTests && dir === 'test'));
  return dirs.map((dir) => ({
    regex: `^(\\.\\./)+(.*/)?${escape(dir)}(/|$)`,
    message: `${side} must not import ${dir}/ (layers: docs/architecture.md)`,
  }));
}

/** A pattern forbidding a layer's files to import a later layer of the same side. */
function laterLayers(side, index, depth) {
  const later = LAYERS[side].slice(index + 1).flat();
  if (later.length === 0) return [];
  const up = depth === 0 ? '\\./' : `(\\.\\./){${depth}}`;
  return [
    {
      regex: `^${up}(${later.map(escape).join('|')})(/|$)`,
      message: `${side}/${LAYERS[side][index].join('|')} must not import a later layer (${later.join(', ')})`,
    },
  ];
}

function layerConfigs() {
  const out = [];
  for (const side of Object.keys(SIDES)) {
    const layers = LAYERS[side] ?? [];
    // Files of the side outside any layer folder (and common/src): only the cross-side rule.
    out.push({ files: [`${side}/**/*.ts`], rules: restrict(crossSide(side)) });
    layers.forEach((names, index) => {
      for (const name of names) {
        // A folder layer: its files at depth 1 (../x) and in sub-folders (../../x).
        out.push({
          files: [`${side}/${name}/*.ts`],
          rules: restrict([...crossSide(side), ...laterLayers(side, index, 1)]),
        });
        out.push({
          files: [`${side}/${name}/*/**/*.ts`],
          rules: restrict([...crossSide(side), ...laterLayers(side, index, 2)]),
        });
        // A root-file layer (main.ts, worker*.ts): imports ./x.
        out.push({
          files: [`${side}/${name}.ts`],
          rules: restrict([...crossSide(side), ...laterLayers(side, index, 0)]),
        });
      }
    });
    // Unit tests beside the code may use the shared fixtures (test/fixtures) and any layer of
    // their side, never the other side.
    out.push({ files: [`${side}/**/*.test.ts`], rules: restrict(crossSide(side, true)) });
  }
  return out;
}

function restrict(patterns) {
  return { 'no-restricted-imports': ['error', { patterns }] };
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'charts/**', 'coverage/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  ...layerConfigs(),
  {
    // Plain CommonJS scripts (the test-bed supervisor, configs) run without a build step.
    files: ['**/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
