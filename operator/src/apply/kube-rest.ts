/**
 * A thin REST layer over @kubernetes/client-node: the client's KubeConfig does authentication
 * and TLS, its fetch-based transport sends the request and its Watch streams events. We talk in
 * raw paths and plain JSON because the operator needs things the typed APIs make awkward: one
 * apply code path for every kind, metadata-only lists and watches (Secrets never enter memory),
 * and timestamps kept as the server's strings so hashes of list and watch results agree.
 */
import { countKubeRequest } from './request-counts';
import { HttpsTransport, httpsUsable } from './kube-https';
import { HttpMethod, IsomorphicFetchHttpLibrary, KubeConfig, RequestContext, Watch } from './kube-lib';

/** Accept header of a list that returns PartialObjectMetadata items (no spec, data or status). */
export const METADATA_LIST_ACCEPT =
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
/** Accept header of a watch whose events carry PartialObjectMetadata objects. */
const METADATA_WATCH_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** An error answer of the apiserver (or a transport failure, with status 0). */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

/** True when `err` is an apiserver answer with this HTTP status. */
export function isStatus(err: unknown, status: number): boolean {
  return err instanceof KubeApiError && err.status === status;
}

/** Options of one request. */
export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  accept?: string;
  timeoutMs?: number;
}

/** One watch event as the apiserver streams it. */
export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: Record<string, unknown>;
}

/** The operations every other module uses to reach the apiserver. */
export interface KubeClient {
  /** Sends one request; resolves with the parsed JSON body, rejects with KubeApiError. */
  request<T = unknown>(method: HttpMethod, path: string, opts?: RequestOptions): Promise<T>;
  /**
   * Streams one watch; resolves when the stream ends normally (server timeout, idle), rejects
   * on a transport or HTTP error. `signal` aborts it.
   */
  watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (e: WatchEvent) => void,
    opts: { signal: AbortSignal; metadataOnly?: boolean },
  ): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** How long one connection pool (undici Agent) serves requests before a fresh one takes over. */
const DISPATCHER_TTL_MS = 5 * 60_000;

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/**
 * One keep-alive connection pool for every request. client-node 2.0's applySecurityAuthentication
 * builds a new undici Agent per request, so each request paid a TCP + TLS handshake and a new
 * SecureContext (half the operator's CPU at 100 pipelines, and the apiserver's). The shared Agent
 * is replaced every DISPATCHER_TTL_MS so rotated client certificates (exec plugins) are picked up;
 * the old one finishes its requests and closes.
 */
export class SharedDispatcher {
  private current?: { dispatcher: Dispatcher; since: number };

  constructor(private readonly now: () => number = Date.now) {}

  /** Puts the shared pool on `ctx` in place of the per-request one authentication just set. */
  use(ctx: RequestContext): void {
    const fresh = ctx.getDispatcher();
    if (!fresh) return;
    const t = this.now();
    if (!this.current || t - this.current.since > DISPATCHER_TTL_MS) {
      const old = this.current?.dispatcher;
      this.current = { dispatcher: fresh, since: t };
      if (old) void old.close().catch(() => undefined);
      return;
    }
    // Never connected: closing it frees nothing but its bookkeeping.
    if (fresh !== this.current.dispatcher) void fresh.close().catch(() => undefined);
    ctx.setDispatcher(this.current.dispatcher);
  }
}

/** Builds a KubeClient from a loaded KubeConfig. */
export function createKubeClient(kc: KubeConfig): KubeClient {
  const transport = new IsomorphicFetchHttpLibrary();
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('kubeconfig has no current cluster');
  const shared = new SharedDispatcher();
  const direct = httpsUsable(kc) ? new HttpsTransport(kc) : undefined;
  return {
    async request<T>(method: HttpMethod, path: string, opts: RequestOptions = {}): Promise<T> {
      countKubeRequest(method, path, opts.query);
      if (direct) return viaHttps<T>(direct, server, method, path, opts);
      const ctx = new RequestContext(server + path, method);
      for (const [k, v] of Object.entries(opts.query ?? {}))
        if (v !== undefined) ctx.setQueryParam(k, String(v));
      ctx.setHeaderParam('Accept', opts.accept ?? 'application/json');
      if (opts.body !== undefined) {
        ctx.setHeaderParam('Content-Type', opts.contentType ?? 'application/json');
        ctx.setBody(JSON.stringify(opts.body));
      }
      ctx.setSignal(AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS));
      await kc.applySecurityAuthentication(ctx);
      shared.use(ctx);
      let status: number;
      let text: string;
      try {
        const resp = await transport.send(ctx).toPromise();
        status = resp.httpStatusCode;
        text = await resp.body.text();
      } catch (err) {
        throw new KubeApiError(0, 'TransportError', `${method} ${path}: ${(err as Error).message}`);
      }
      if (status >= 400) throw toApiError(status, method, path, text);
      return (text ? JSON.parse(text) : undefined) as T;
    },
    watch(path, query, onEvent, opts) {
      return runWatch(watchConfig(kc, opts.metadataOnly === true), path, query, onEvent, opts.signal);
    },
  };
}

/** One request over the keep-alive node:https transport (kube-https.ts), with the fetch path's answers and errors. */
async function viaHttps<T>(
  direct: HttpsTransport,
  server: string,
  method: string,
  path: string,
  opts: RequestOptions,
): Promise<T> {
  const url = new URL(server + path);
  for (const [k, v] of Object.entries(opts.query ?? {}))
    if (v !== undefined) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { Accept: opts.accept ?? 'application/json' };
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers['Content-Type'] = opts.contentType ?? 'application/json';
    body = JSON.stringify(opts.body);
  }
  let answer: { status: number; text: string };
  try {
    answer = await direct.send(method, url, headers, body, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  } catch (err) {
    throw new KubeApiError(0, 'TransportError', `${method} ${path}: ${(err as Error).message}`);
  }
  if (answer.status >= 400) throw toApiError(answer.status, method, path, answer.text);
  return (answer.text ? JSON.parse(answer.text) : undefined) as T;
}

function toApiError(status: number, method: string, path: string, text: string): KubeApiError {
  let reason = 'Unknown';
  let message = text.slice(0, 500);
  try {
    const parsed = JSON.parse(text) as { reason?: string; message?: string };
    reason = parsed.reason ?? reason;
    message = parsed.message ?? message;
  } catch {
    /* not a Status object */
  }
  return new KubeApiError(status, reason, `${method} ${path}: ${status} ${message}`);
}

/**
 * The client's Watch only asks the config for the cluster and to authenticate a request; this
 * adapter adds the metadata-only Accept header there, which the Watch offers no other way to set.
 */
function watchConfig(kc: KubeConfig, metadataOnly: boolean): KubeConfig {
  if (!metadataOnly) return kc;
  const adapter = {
    getCurrentCluster: () => kc.getCurrentCluster(),
    applySecurityAuthentication: async (ctx: RequestContext) => {
      await kc.applySecurityAuthentication(ctx);
      ctx.setHeaderParam('Accept', METADATA_WATCH_ACCEPT);
    },
  };
  return adapter as unknown as KubeConfig;
}

function runWatch(
  config: KubeConfig,
  path: string,
  query: Record<string, string | number | boolean | undefined>,
  onEvent: (e: WatchEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return resolve();
    let controller: AbortController | undefined;
    const onAbort = () => controller?.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const done = (err: unknown) => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) return resolve();
      // The client aborts an idle stream after its inactivity timeout: an ordinary end.
      if (!err || (err as { name?: string }).name === 'TimeoutError') return resolve();
      const status = (err as { statusCode?: number }).statusCode ?? 0;
      reject(
        new KubeApiError(status, 'WatchFailed', `watch ${path}: ${(err as Error).message ?? String(err)}`),
      );
    };
    new Watch(config)
      .watch(path, query, (type, object) => onEvent({ type: type as WatchEvent['type'], object }), done)
      .then((c) => {
        controller = c;
        if (signal.aborted) c.abort();
      })
      .catch(done);
  });
}
