/**
 * The Helm chart on the test bed: render it with the real helm binary, apply the objects with the
 * admin identity (server-side apply, as `helm install` or GitOps tools would), and mint a
 * kubeconfig for the chart's ServiceAccount so the operator can run with exactly the chart's RBAC.
 *
 * Requests go over plain HTTPS driven by a kubeconfig file (client certificate or bearer token),
 * so the kubeconfigs written here are exercised exactly as a client would read them.
 */
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { parse } from 'yaml';
import { renderChart, type RenderedObject } from '../../scripts/helm';
import type { KubernetesBed } from './testbed';

export { renderChart, type RenderedObject } from '../../scripts/helm';

/** Field manager of every object the bed applies from the chart. */
export const CHART_FIELD_MANAGER = 'logpipeline-chart';

type Bed = Pick<KubernetesBed, 'server' | 'kubeconfig'>;

/** An apiserver answer: HTTP status and the parsed JSON body (undefined when not JSON). */
export interface KubeResponse {
  status: number;
  body: unknown;
}

interface KubeconfigFile {
  clusters: Array<{ name: string; cluster: { server: string; 'certificate-authority': string } }>;
  users: Array<{
    name: string;
    user: { token?: string; 'client-certificate'?: string; 'client-key'?: string };
  }>;
  contexts: Array<{ name: string; context: { cluster: string; user: string; namespace?: string } }>;
  'current-context': string;
}

/** Server, CA and credentials of a kubeconfig's current context (file paths resolved). */
function credentials(kubeconfig: string): { server: string; tls: https.RequestOptions; token?: string } {
  const kc = parse(fs.readFileSync(kubeconfig, 'utf8')) as KubeconfigFile;
  const ctx = kc.contexts.find((c) => c.name === kc['current-context'])!.context;
  const cluster = kc.clusters.find((c) => c.name === ctx.cluster)!.cluster;
  const user = kc.users.find((u) => u.name === ctx.user)!.user;
  const tls: https.RequestOptions = { ca: fs.readFileSync(cluster['certificate-authority']) };
  if (user['client-certificate'] && user['client-key']) {
    tls.cert = fs.readFileSync(user['client-certificate']);
    tls.key = fs.readFileSync(user['client-key']);
  }
  return { server: cluster.server, tls, token: user.token };
}

/** Sends one request with the identity of `kubeconfig`; resolves with any HTTP status. */
export function kubeconfigRequest(
  kubeconfig: string,
  method: string,
  urlPath: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<KubeResponse> {
  const { server, tls, token } = credentials(kubeconfig);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = contentType;
  if (token) headers.authorization = `Bearer ${token}`;
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(urlPath, server),
      { method, headers, timeout: 15_000, ...tls },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (data += c));
        res.on('end', () => {
          let parsed: unknown;
          try {
            parsed = data ? JSON.parse(data) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`${method} ${urlPath} timed out`)));
    if (body !== undefined) req.write(JSON.stringify(body));
    req.end();
  });
}

/** Renders the chart for a release; an alias so bed users need only this module. */
export function renderRelease(values: object, releaseName: string, namespace: string): RenderedObject[] {
  return renderChart(values, { releaseName, namespace });
}

/** Resource name and scope of a kind, from the apiserver's discovery document of its group version. */
async function resourceFor(
  kubeconfig: string,
  apiVersion: string,
  kind: string,
): Promise<{ name: string; namespaced: boolean }> {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const res = await kubeconfigRequest(kubeconfig, 'GET', base);
  const list = res.body as
    { resources?: Array<{ name: string; kind: string; namespaced: boolean }> } | undefined;
  const hit = list?.resources?.find((r) => r.kind === kind && !r.name.includes('/'));
  if (!hit) throw new Error(`the apiserver serves no ${kind} in ${apiVersion} (${res.status})`);
  return hit;
}

/** REST path of one object, e.g. /apis/apps/v1/namespaces/ns/deployments/name. */
async function objectPath(kubeconfig: string, obj: RenderedObject): Promise<string> {
  const r = await resourceFor(kubeconfig, obj.apiVersion, obj.kind);
  const base = obj.apiVersion.includes('/') ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
  const ns = r.namespaced ? `/namespaces/${obj.metadata.namespace ?? 'default'}` : '';
  return `${base}${ns}/${r.name}/${obj.metadata.name}`;
}

/**
 * Server-side applies rendered objects as the admin, in manifest order (helm sorts them so RBAC
 * precedes the Deployment). CRDs are skipped: the bed applied crds/ at start and the chart's copy
 * is identical (scripts/chart-crds.test.ts). Resolves with the stored objects.
 */
export async function applyRendered(bed: Bed, objects: RenderedObject[]): Promise<unknown[]> {
  const applied: unknown[] = [];
  for (const obj of objects.filter((o) => o.kind !== 'CustomResourceDefinition')) {
    const url = `${await objectPath(bed.kubeconfig, obj)}?fieldManager=${CHART_FIELD_MANAGER}&force=true`;
    // JSON is YAML, so the apply-patch+yaml content type takes the object as is.
    const res = await kubeconfigRequest(bed.kubeconfig, 'PATCH', url, obj, 'application/apply-patch+yaml');
    if (res.status !== 200 && res.status !== 201) {
      throw new Error(
        `applying ${obj.kind} ${obj.metadata.namespace ?? ''}/${obj.metadata.name} failed (${res.status}): ${JSON.stringify(res.body)}`,
      );
    }
    applied.push(res.body);
  }
  return applied;
}

/** Deletes rendered objects as the admin (reverse order), ignoring ones already gone; for cleanup. */
export async function deleteRendered(bed: Bed, objects: RenderedObject[]): Promise<void> {
  for (const obj of [...objects].reverse().filter((o) => o.kind !== 'CustomResourceDefinition')) {
    const res = await kubeconfigRequest(bed.kubeconfig, 'DELETE', await objectPath(bed.kubeconfig, obj));
    if (res.status >= 300 && res.status !== 404)
      throw new Error(`deleting ${obj.kind}/${obj.metadata.name} failed (${res.status})`);
  }
}

/** Creates a namespace as the admin (no error when it exists). */
export async function ensureNamespace(bed: Bed, name: string): Promise<void> {
  const res = await kubeconfigRequest(bed.kubeconfig, 'POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name },
  });
  if (res.status !== 201 && res.status !== 409)
    throw new Error(`creating namespace ${name} failed (${res.status}): ${JSON.stringify(res.body)}`);
}

/**
 * Mints a token for a ServiceAccount through the TokenRequest API and writes a kubeconfig that
 * authenticates with it (default namespace: the ServiceAccount's); returns the file's path.
 */
export async function serviceAccountKubeconfig(
  bed: Bed,
  namespace: string,
  saName: string,
  expirationSeconds = 3600,
): Promise<string> {
  const res = await kubeconfigRequest(
    bed.kubeconfig,
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${saName}/token`,
    {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds },
    },
  );
  if (res.status !== 201)
    throw new Error(
      `TokenRequest for ${namespace}/${saName} failed (${res.status}): ${JSON.stringify(res.body)}`,
    );
  const token = (res.body as { status: { token: string } }).status.token;
  const dir = path.dirname(bed.kubeconfig);
  const file = path.join(dir, `sa-${namespace}-${saName}.kubeconfig`);
  const kubeconfig: KubeconfigFile & { apiVersion: string; kind: string } = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'testbed',
        cluster: { server: bed.server, 'certificate-authority': path.join(dir, 'pki', 'ca.crt') },
      },
    ],
    users: [{ name: saName, user: { token } }],
    contexts: [{ name: 'testbed', context: { cluster: 'testbed', user: saName, namespace } }],
    'current-context': 'testbed',
  };
  // The token is a credential: owner-only file mode. JSON is valid kubeconfig YAML.
  fs.writeFileSync(file, JSON.stringify(kubeconfig, null, 2), { mode: 0o600 });
  return file;
}
