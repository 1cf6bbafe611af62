/**
 * Loads @kubernetes/client-node's KubeConfig without the client's generated API. Its config
 * module imports `./gen/index.js` for two small helpers, and that index pulls in every typed API
 * and model: ~16 MiB of module source kept in the heap for the life of the process, plus its
 * compiled code, none of which the operator calls (it talks raw REST, apply/kube-rest.ts).
 * Importing this module first registers a resolve hook (Node's synchronous module hooks) that
 * answers that one import with a module re-exporting just the two helpers; kube-lib.ts removes
 * the hook once the client's modules are loaded. Where the hook cannot apply (no
 * `module.registerHooks`, jest's own module system, a client release that moved its files) the
 * full index loads as before: slower to start and heavier, never wrong.
 */
import Module from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The importer and specifier the hook answers (client-node 2.x's layout). */
const CONFIG_MODULE = '/@kubernetes/client-node/dist/config.js';
const GEN_INDEX = './gen/index.js';

interface ResolveContext {
  parentURL?: string;
}
interface ResolveResult {
  url: string;
  shortCircuit?: boolean;
}
type RegisterHooks = (hooks: {
  resolve(
    specifier: string,
    context: ResolveContext,
    next: (specifier: string, context: ResolveContext) => ResolveResult,
  ): ResolveResult;
}) => { deregister(): void };

/** Whether the hook answered the config module's import of the generated index (tests, logs). */
export const slimLoad = { redirected: false, deregister: () => undefined as void };

/** The module standing in for `gen/index.js`: the two names config.js imports from it, nothing else. */
export function slimGenIndexUrl(genDir: string): string {
  const from = (file: string) => JSON.stringify(pathToFileURL(path.join(genDir, file)).href);
  const source =
    `export { createConfiguration } from ${from('configuration.js')};\n` +
    `export { ServerConfiguration } from ${from('servers.js')};\n`;
  return `data:text/javascript,${encodeURIComponent(source)}`;
}

function register(): void {
  const registerHooks = (Module as unknown as { registerHooks?: RegisterHooks }).registerHooks;
  if (typeof registerHooks !== 'function') return;
  let genDir: string;
  try {
    genDir = path.join(path.dirname(require.resolve('@kubernetes/client-node/dist/config.js')), 'gen');
  } catch {
    return;
  }
  const url = slimGenIndexUrl(genDir);
  let handle: { deregister(): void };
  try {
    handle = registerHooks({
      resolve(specifier, context, next) {
        if (specifier === GEN_INDEX && context.parentURL?.endsWith(CONFIG_MODULE)) {
          slimLoad.redirected = true;
          return { url, shortCircuit: true };
        }
        return next(specifier, context);
      },
    });
  } catch {
    return; // jest refuses module hooks (its sandbox has its own loader): load the full index
  }
  slimLoad.deregister = () => handle.deregister();
}

register();
