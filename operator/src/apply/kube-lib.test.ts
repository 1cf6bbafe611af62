import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { transformSync } from '@swc/core';

// jest's module system ignores Node's module hooks, so the modules are compiled as the build
// compiles them and loaded by a plain Node process, the way the operator loads them.
const repo = path.resolve(__dirname, '../../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kube-lib-'));
for (const name of ['kube-slim-load', 'kube-lib']) {
  const source = fs.readFileSync(path.join(__dirname, `${name}.ts`), 'utf8');
  const { code } = transformSync(source, {
    filename: `${name}.ts`,
    jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
    module: { type: 'commonjs' },
  });
  fs.writeFileSync(path.join(dir, `${name}.js`), code);
}
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443'}}]
users: [{name: u, user: {token: secret-token}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;

/** Runs `body` in a fresh Node process with `load` evaluated first; returns its JSON output. */
function inChild(load: string, body: string): Record<string, unknown> {
  const script = `
    global.gc(); const before = process.memoryUsage().heapUsed;
    ${load}
    global.gc(); const grew = (process.memoryUsage().heapUsed - before) / 1048576;
    (async () => { ${body} })().then((out) => console.log(JSON.stringify({ grew, ...out })));
  `;
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], {
    cwd: dir,
    env: { ...process.env, NODE_PATH: path.join(repo, 'node_modules') },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

describe('kube-lib', () => {
  it('loads KubeConfig without the generated API, and it still authenticates requests', () => {
    const out = inChild(
      `const lib = require('./kube-lib.js'); const { slimLoad } = require('./kube-slim-load.js');`,
      `const kc = new lib.KubeConfig();
       kc.loadFromString(${JSON.stringify(KUBECONFIG)});
       const ctx = new lib.RequestContext(kc.getCurrentCluster().server + '/api', lib.HttpMethod.GET);
       await kc.applySecurityAuthentication(ctx);
       return { redirected: slimLoad.redirected, auth: ctx.getHeaders().Authorization,
                apply: lib.PatchStrategy.ServerSideApply, watch: typeof lib.Watch };`,
    );
    expect(out).toMatchObject({
      redirected: true,
      auth: 'Bearer secret-token',
      apply: 'application/apply-patch+yaml',
      watch: 'function',
    });
    // The whole package for comparison, in the same kind of process.
    const full = inChild(`require('@kubernetes/client-node');`, 'return {};');
    expect(full.grew as number).toBeGreaterThan((out.grew as number) + 10);
  });
});
