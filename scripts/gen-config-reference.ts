/**
 * Generates docs/configuration.md from the committed CRD's openAPIV3Schema: one section per object
 * (spec, spec.kafka, spec.clickhouse.columns[], …) with every field's path, type, default,
 * description and limits, followed by the CEL rules attached to that object and their messages.
 * The CRD is the single source: `npm run docs:reference` rewrites the page, and
 * gen-config-reference.test.ts fails when the committed page differs from what this renders.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DURATION_PATTERN } from '../operator/src/api/duration';
import { loadCrd, type CelRule, type JSONSchemaProps, type LogPipelineCrd } from '../operator/src/api/schema';
import { REPO_ROOT } from './helm';

/** Where the generated page lives. */
export const CONFIG_REFERENCE_FILE = path.join(REPO_ROOT, 'docs', 'configuration.md');

/** One object of the schema that gets its own section. */
interface Section {
  path: string;
  node: JSONSchemaProps;
}

/** Markdown table cells must not contain raw pipes or line breaks. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** Inline code that survives a table cell (backticks inside are rare; fall back to double ticks). */
function code(text: string): string {
  return text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``;
}

/** GitHub's heading anchor for a plain-text heading. */
export function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');
}

/**
 * The default a description states ("Default 6.", "Default: the preset key.", "Retain (default; …)").
 * Defaults live in descriptions, not in `default:` keywords, because a structural default would be
 * written into every object by the apiserver (and would, e.g., set replicas beside autoscaling).
 * A `;` ends the default unless the text before it lists several parts with commas.
 */
export function defaultFromDescription(description: string): string | undefined {
  const m = /\bDefault:?\s+(.+?)(?:\.(?=\s|$)|$)/.exec(description);
  if (m) {
    const semi = m[1].indexOf('; ');
    return semi >= 0 && !m[1].slice(0, semi).includes(',') ? m[1].slice(0, semi) : m[1];
  }
  const lead = /(?:^|:\s)`?([A-Za-z0-9]+)`?\s+\(default\b/.exec(description);
  return lead?.[1];
}

function isObjectWithFields(node: JSONSchemaProps): boolean {
  return node.type === 'object' && node.properties !== undefined && Object.keys(node.properties).length > 0;
}

/** The type as a reader thinks of it: string (duration), []object, map[string]string, int-or-string. */
export function typeName(node: JSONSchemaProps): string {
  if (node['x-kubernetes-int-or-string']) return 'int-or-string';
  if (node.type === 'array') return `[]${node.items ? typeName(node.items) : 'any'}`;
  if (node.type === 'object') {
    if (node.additionalProperties) return `map[string]${typeName(node.additionalProperties)}`;
    if (!node.properties && node['x-kubernetes-preserve-unknown-fields']) return 'object (free-form)';
    return 'object';
  }
  if (node.pattern === DURATION_PATTERN) return 'string (duration)';
  return node.format ? `${node.type} (${node.format})` : (node.type ?? 'any');
}

/** Limits of one value (not of its items): enum, pattern, length, range, counts. */
function ownLimits(node: JSONSchemaProps): string[] {
  const out: string[] = [];
  if (node.enum) out.push(`one of ${node.enum.map(code).join(', ')}`);
  if (node.pattern === DURATION_PATTERN)
    out.push('a duration: a leading day count, then ms/s/m/h, e.g. `730d`, `1d12h`, `90s`');
  else if (node.pattern) out.push(`pattern ${code(node.pattern)}`);
  const range = (lo: number | undefined, hi: number | undefined, what: string) => {
    if (lo !== undefined && hi !== undefined) out.push(`${what} ${lo}..${hi}`);
    else if (lo !== undefined) out.push(`${what} ≥ ${lo}`);
    else if (hi !== undefined) out.push(`${what} ≤ ${hi}`);
  };
  range(node.minimum, node.maximum, 'value');
  range(node.minLength, node.maxLength, 'length');
  range(node.minItems, node.maxItems, 'items');
  range(undefined, node.maxProperties, 'keys');
  if (node['x-kubernetes-list-type'] === 'map')
    out.push(`list keyed by ${(node['x-kubernetes-list-map-keys'] ?? []).map(code).join(', ')} (unique)`);
  return out;
}

/** Limits including those of primitive array items and map values. */
export function limits(node: JSONSchemaProps): string {
  const out = ownLimits(node);
  const inner = node.type === 'array' ? node.items : node.additionalProperties;
  if (inner && !isObjectWithFields(inner)) {
    const innerLimits = ownLimits(inner);
    if (innerLimits.length > 0)
      out.push(`each ${node.type === 'array' ? 'item' : 'value'}: ${innerLimits.join(', ')}`);
  }
  return out.join('; ');
}

/** Every object with fields, depth first in schema order, starting at `root` named `rootPath`. */
export function collectSections(root: JSONSchemaProps, rootPath: string): Section[] {
  const sections: Section[] = [];
  const visit = (node: JSONSchemaProps, at: string) => {
    if (isObjectWithFields(node)) sections.push({ path: at, node });
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      const childPath = at ? `${at}.${name}` : name;
      if (child.type === 'array' && child.items && isObjectWithFields(child.items))
        visit(child.items, `${childPath}[]`);
      else visit(child, childPath);
    }
  };
  visit(root, rootPath);
  return sections;
}

/** The section a field links to, when it has one. */
function sectionPathOf(child: JSONSchemaProps, childPath: string): string | undefined {
  if (isObjectWithFields(child)) return childPath;
  if (child.type === 'array' && child.items && isObjectWithFields(child.items)) return `${childPath}[]`;
  return undefined;
}

function fieldRow(section: Section, name: string, child: JSONSchemaProps): string {
  const fieldPath = `${section.path}.${name}`;
  const target = sectionPathOf(child, fieldPath);
  const required = (section.node.required ?? []).includes(name) ? ' **(required)**' : '';
  const type = target ? `[${typeName(child)}](#${anchor(target)})` : code(typeName(child));
  const dflt = defaultFromDescription(child.description ?? '');
  return `| ${code(fieldPath)}${required} | ${type} | ${dflt ? cell(dflt) : ''} | ${cell(child.description ?? '')} | ${cell(limits(child))} |`;
}

/**
 * The message a user sees: `message`, or the format string of a `messageExpression` of the form
 * `'text %d …'.format([...])` with each placeholder shown as N.
 */
export function ruleMessage(rule: CelRule): string {
  if (rule.message) return rule.message;
  const expr = rule.messageExpression ?? '';
  const m = /^'((?:[^'\\]|\\.)*)'\.format\(/.exec(expr);
  return m ? m[1].replace(/\\(.)/g, '$1').replace(/%[ds]/g, 'N') : expr;
}

function ruleBlock(sectionPath: string, rule: CelRule): string[] {
  const where = rule.fieldPath ? `${sectionPath}${rule.fieldPath}` : sectionPath;
  const onUpdate = /\boldSelf\b/.test(rule.rule) ? ' (on update: compares with the stored object)' : '';
  return [
    `- **${code(where)}**${onUpdate}${rule.reason ? ` — reason ${code(rule.reason)}` : ''}`,
    '',
    `  > ${ruleMessage(rule)}`,
    '',
    '  ```cel',
    `  ${rule.rule}`,
    '  ```',
    '',
  ];
}

function renderSection(section: Section, level: number): string[] {
  const out = [`${'#'.repeat(level)} ${section.path}`, '', section.node.description ?? '', ''];
  const fields = Object.entries(section.node.properties ?? {});
  out.push('| Field | Type | Default | Description | Limits |', '| --- | --- | --- | --- | --- |');
  for (const [name, child] of fields) out.push(fieldRow(section, name, child));
  out.push('');
  // Rules on this object, then on its fields that have no section of their own (maps, strings).
  const rules = (section.node['x-kubernetes-validations'] ?? []).map((rule) => ({ at: section.path, rule }));
  for (const [name, child] of fields) {
    if (sectionPathOf(child, name)) continue;
    for (const rule of child['x-kubernetes-validations'] ?? [])
      rules.push({ at: `${section.path}.${name}`, rule });
  }
  if (rules.length > 0) {
    out.push('**Validation rules** (CEL, enforced by the API server):', '');
    for (const { at, rule } of rules) out.push(...ruleBlock(at, rule));
  }
  return out;
}

function header(crd: LogPipelineCrd, version: string): string[] {
  const { group, names } = crd.spec;
  return [
    '# LogPipeline configuration reference',
    '',
    '<!-- Generated by `npm run docs:reference` from crds/logpipeline.io_logpipelines.yaml. Do not edit by hand. -->',
    '',
    `\`apiVersion: ${group}/${version}\`, \`kind: ${names.kind}\` (short name ${(names.shortNames ?? []).map(code).join(', ')}), namespaced.`,
    'Every field of the CustomResourceDefinition, with its type, default, description and the limits the API',
    'server enforces. Defaults are applied by the operator (they are not written into the object), so',
    '`kubectl get lp -o yaml` shows only what you set. `logpipeline plan` and the unit tests validate',
    'manifests offline with the same schema and rules (operator/src/api/validate.ts).',
    '',
    'Durations are strings such as `90s`, `15m`, `12h`, `730d` or `1d12h`: an optional leading day count',
    'followed by hours, minutes, seconds or milliseconds.',
    '',
  ];
}

function subresources(crd: LogPipelineCrd): string[] {
  const v = crd.spec.versions[0] as unknown as {
    subresources?: { scale?: Record<string, string> };
    additionalPrinterColumns?: Array<{ name: string; jsonPath: string; description?: string }>;
  };
  const out: string[] = [];
  if (v.subresources?.scale) {
    const s = v.subresources.scale;
    out.push(
      '## Subresources',
      '',
      `- \`status\`: written only by the operator.`,
      `- \`scale\`: \`kubectl scale lp <name> --replicas=N\` sets ${code(s.specReplicasPath)}; replicas are read from ${code(s.statusReplicasPath)} and the pod selector from ${code(s.labelSelectorPath)}.`,
      '',
    );
  }
  if (v.additionalPrinterColumns?.length) {
    out.push('## `kubectl get lp` columns', '', '| Column | From | Meaning |', '| --- | --- | --- |');
    for (const c of v.additionalPrinterColumns)
      out.push(`| ${c.name} | ${code(c.jsonPath)} | ${cell(c.description ?? '')} |`);
    out.push('');
  }
  return out;
}

/** Renders the whole reference page for `crd` (pure: same CRD, same bytes). */
export function renderConfigReference(crd: LogPipelineCrd): string {
  const version = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0];
  const root = version.schema.openAPIV3Schema;
  const spec = collectSections(root.properties?.spec ?? {}, 'spec');
  const status = collectSections(root.properties?.status ?? {}, 'status');
  const toc = (sections: Section[]) =>
    sections.map((s) => `${'  '.repeat(s.path.split('.').length - 1)}- [${s.path}](#${anchor(s.path)})`);
  const out = [
    ...header(crd, version.name),
    '## Contents',
    '',
    ...toc(spec),
    ...toc(status),
    '- [Subresources](#subresources)',
    '',
    '## Spec fields',
    '',
  ];
  for (const s of spec) out.push(...renderSection(s, 3));
  out.push('## Status fields', '', 'Written by the operator; read-only for users.', '');
  for (const s of status) out.push(...renderSection(s, 3));
  out.push(...subresources(crd));
  return (
    out
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trimEnd() + '\n'
  );
}

if (require.main === module) {
  const text = renderConfigReference(loadCrd());
  fs.mkdirSync(path.dirname(CONFIG_REFERENCE_FILE), { recursive: true });
  fs.writeFileSync(CONFIG_REFERENCE_FILE, text);
  process.stdout.write(`wrote ${path.relative(REPO_ROOT, CONFIG_REFERENCE_FILE)} (${text.length} bytes)\n`);
}
