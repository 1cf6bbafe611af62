/**
 * The parts of @kubernetes/client-node the operator uses (kubeconfig loading and authentication,
 * the fetch transport, Watch, patch content types), imported module by module instead of through
 * the package index, which loads every typed API, the informer, exec, attach and port-forward as
 * well. kube-slim-load.ts keeps the config module from loading the generated API; it must be
 * imported first (the imports below run in order).
 */
import { slimLoad } from './kube-slim-load';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import {
  HttpMethod,
  IsomorphicFetchHttpLibrary,
  RequestContext,
} from '@kubernetes/client-node/dist/gen/http/http.js';
import { PatchStrategy } from '@kubernetes/client-node/dist/patch.js';
import { Watch } from '@kubernetes/client-node/dist/watch.js';

// Loaded: later imports of the client (the CLI, tests) resolve without the hook.
slimLoad.deregister();

export { HttpMethod, IsomorphicFetchHttpLibrary, KubeConfig, PatchStrategy, RequestContext, Watch };
