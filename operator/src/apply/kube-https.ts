/**
 * The apiserver's requests over node:https with one keep-alive agent (issue 18: the operator's own
 * CPU per new pipeline). client-node's fetch path builds a RequestContext, re-reads the kubeconfig's
 * certificate files and makes an undici Agent for every request, then answers through WHATWG
 * streams: about 0.5 ms of CPU per small request against 0.25-0.35 ms here, and a third of the
 * operator's CPU in a creation storm was the kube client. The credentials still come from the
 * KubeConfig (client certificates, bearer tokens, token files, exec and auth-provider plugins
 * through `applyToHTTPSOptions`); they are read again every REFRESH_MS, and at once after a 401
 * (a rotated token), so rotation works as before. Watches stay on client-node's Watch, and a
 * cluster reached through a proxy uses the fetch path (kube-rest.ts).
 */
import https from 'node:https';
import type { KubeConfig } from './kube-lib';

/** Credentials and TLS material are read again this often (token files, exec plugins, rotated certificates). */
const REFRESH_MS = 60_000;
/** A replaced agent's sockets are closed this long after the swap (longer than any request's timeout). */
const RETIRE_MS = 90_000;

interface Connection {
  agent: https.Agent;
  headers: Record<string, string>;
}

/** One answer: HTTP status and body text. */
export interface HttpsAnswer {
  status: number;
  text: string;
}

/** True when requests to the current cluster can go over node:https (https, no proxy). */
export function httpsUsable(kc: KubeConfig): boolean {
  const cluster = kc.getCurrentCluster();
  return !!cluster && cluster.server.startsWith('https:') && !cluster.proxyUrl;
}

/** Sends requests to the current cluster of a KubeConfig over one keep-alive agent. */
export class HttpsTransport {
  private current?: Promise<Connection>;
  private since = 0;

  constructor(
    private readonly kc: KubeConfig,
    private readonly now: () => number = Date.now,
  ) {}

  /** Sends one request; retries once with fresh credentials when the apiserver answers 401. */
  async send(
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    timeoutMs: number,
  ): Promise<HttpsAnswer> {
    const first = await this.once(await this.connection(false), method, url, headers, body, timeoutMs);
    if (first.status !== 401) return first;
    return this.once(await this.connection(true), method, url, headers, body, timeoutMs);
  }

  private connection(fresh: boolean): Promise<Connection> {
    const t = this.now();
    if (this.current && !fresh && t - this.since <= REFRESH_MS) return this.current;
    const old = this.current;
    this.since = t;
    const next = this.build();
    this.current = next;
    next.catch(() => {
      if (this.current === next) this.current = undefined;
    });
    // In-flight requests on the old agent finish (each has a timeout); then its sockets close.
    void old?.then(
      (c) => setTimeout(() => c.agent.destroy(), RETIRE_MS).unref(),
      () => undefined,
    );
    return next;
  }

  private async build(): Promise<Connection> {
    const opts: https.RequestOptions = {};
    await this.kc.applyToHTTPSOptions(opts);
    const agent = new https.Agent({
      keepAlive: true,
      ca: opts.ca,
      cert: opts.cert,
      key: opts.key,
      pfx: opts.pfx,
      passphrase: opts.passphrase,
      servername: opts.servername,
      ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}),
    });
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k] = String(v);
    if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    return { agent, headers };
  }

  private once(
    c: Connection,
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    timeoutMs: number,
    retried = false,
  ): Promise<HttpsAnswer> {
    return new Promise((resolve, reject) => {
      const all: Record<string, string | number> = { ...c.headers, ...headers };
      if (body !== undefined) all['Content-Length'] = Buffer.byteLength(body);
      const req = https.request(
        url,
        { method, agent: c.agent, headers: all, signal: AbortSignal.timeout(timeoutMs) },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (b: Buffer) => chunks.push(b));
          res.on('error', reject);
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        // A kept-alive socket the server closed while idle: nothing was processed, send it anew
        // (the race Node's documentation describes for `request.reusedSocket`).
        if (req.reusedSocket && err.code === 'ECONNRESET' && !retried)
          resolve(this.once(c, method, url, headers, body, timeoutMs, true));
        else reject(err);
      });
      req.end(body);
    });
  }
}
