/**
 * Access to the committed LogPipeline CRD (crds/logpipeline.io_logpipelines.yaml), for the config
 * reference generator and any tool that wants the schema exactly as the cluster sees it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { JSONSchemaProps } from './schema-dsl';
import { VERSION } from './types';

export type { CelRule, JSONSchemaProps } from './schema-dsl';

/** Path of the CRD YAML in the repository (works from the sources and from dist/). */
export const CRD_FILE = (() => {
  const fromSource = path.resolve(__dirname, '../../../crds/logpipeline.io_logpipelines.yaml');
  return fs.existsSync(fromSource)
    ? fromSource
    : path.resolve(__dirname, '../../../../crds/logpipeline.io_logpipelines.yaml');
})();

/** Minimal shape of the CRD object as far as readers of the schema need it. */
export interface LogPipelineCrd {
  metadata: { name: string };
  spec: {
    group: string;
    names: { kind: string; plural: string; shortNames?: string[] };
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: JSONSchemaProps };
    }>;
  };
}

/** Parses the CRD YAML at `file`; throws when it is not a CustomResourceDefinition. */
export function loadCrd(file: string = CRD_FILE): LogPipelineCrd {
  const doc = parse(fs.readFileSync(file, 'utf8')) as { kind?: string } & LogPipelineCrd;
  if (doc?.kind !== 'CustomResourceDefinition') throw new Error(`${file} is not a CustomResourceDefinition`);
  return doc;
}

/** The openAPIV3Schema of `version` (default v1alpha1) from the CRD YAML at `file`. */
export function loadOpenApiSchema(file: string = CRD_FILE, version: string = VERSION): JSONSchemaProps {
  const v = loadCrd(file).spec.versions.find((x) => x.name === version);
  if (!v) throw new Error(`${file} has no version ${version}`);
  return v.schema.openAPIV3Schema;
}
