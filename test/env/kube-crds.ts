/**
 * Installs the repository's CRDs into the bed's apiserver (create or update) and waits until each
 * is Established and served in discovery, so a test can create its resources at once. Separate
 * from kubernetes.ts because it is a client of the running apiserver, not part of starting it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { adminRequest } from './kubernetes';
import { waitUntil } from './process';
import type { KubernetesBed } from './testbed';

const REPO = path.resolve(
  __dirname,
  fs.existsSync(path.join(__dirname, '../../crds')) ? '../..' : '../../..',
);

/** Creates or updates every CRD in `crdDir` and waits until each is Established and in discovery. */
export async function applyCrds(bed: KubernetesBed, crdDir = path.join(REPO, 'crds')): Promise<string[]> {
  const { parseAllDocuments } = await import('yaml');
  const names: string[] = [];
  const files = fs.existsSync(crdDir) ? fs.readdirSync(crdDir).filter((f) => /\.ya?ml$/.test(f)) : [];
  for (const file of files) {
    for (const doc of parseAllDocuments(fs.readFileSync(path.join(crdDir, file), 'utf8'))) {
      const crd = doc.toJSON();
      if (crd?.kind !== 'CustomResourceDefinition') continue;
      await upsertCrd(bed, crd);
      names.push(crd.metadata.name);
    }
  }
  for (const name of names) await waitForCrd(bed, name);
  return names;
}

async function upsertCrd(bed: KubernetesBed, crd: { metadata: { name: string; resourceVersion?: string } }) {
  const base = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const created = await adminRequest(bed, 'POST', base, crd);
  if (created.status === 201) return;
  if (created.status !== 409)
    throw new Error(`CRD ${crd.metadata.name} rejected (${created.status}): ${created.body}`);
  const current = JSON.parse((await adminRequest(bed, 'GET', `${base}/${crd.metadata.name}`)).body);
  const updated = await adminRequest(bed, 'PUT', `${base}/${crd.metadata.name}`, {
    ...crd,
    metadata: { ...crd.metadata, resourceVersion: current.metadata.resourceVersion },
  });
  if (updated.status !== 200)
    throw new Error(`CRD ${crd.metadata.name} update rejected (${updated.status}): ${updated.body}`);
}

async function waitForCrd(bed: KubernetesBed, name: string): Promise<void> {
  const [plural, ...groupParts] = name.split('.');
  const group = groupParts.join('.');
  await waitUntil(
    `CRD ${name} Established and discoverable`,
    async () => {
      const crd = JSON.parse(
        (await adminRequest(bed, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`))
          .body,
      );
      const established = crd.status?.conditions?.some(
        (c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True',
      );
      if (!established) return false;
      const versions: Array<{ name: string; served: boolean }> = crd.spec.versions;
      for (const v of versions.filter((x) => x.served)) {
        const disc = await adminRequest(bed, 'GET', `/apis/${group}/${v.name}`);
        if (
          disc.status !== 200 ||
          !JSON.parse(disc.body).resources?.some((r: { name: string }) => r.name === plural)
        )
          return false;
      }
      return true;
    },
    { timeoutMs: 30_000, logFile: bed.apiserver.logFile },
  );
}
