/**
 * Offline validation of a LogPipeline (`logpipeline plan` in GitOps CI): the CRD's structural schema
 * plus the cross-field rules of validate-rules.ts, with the field paths and messages admission uses.
 * Differences from admission: metadata is checked only for a name; ratcheting of unchanged invalid
 * fields is not modelled; durations beyond CEL's range fail their rule with its usual message.
 */
import { buildOpenApiSchema, schemaNodeAt } from './schema-crd';
import type { JSONSchemaProps } from './schema-dsl';
import { API_VERSION, KIND, type LogPipeline } from './types';
import { PIPELINE_RULES, type PipelineRule } from './validate-rules';
import { BLOCKING_ERROR_TYPES, validateAgainstSchema, type ValidationError } from './validate-structure';

export type { ValidationError, ValidationErrorType } from './validate-structure';

/** What the apiserver appends when schema errors stop it from evaluating the CEL rules. */
export const RULES_NOT_CHECKED =
  'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

let cachedSchema: JSONSchemaProps | undefined;
function schema(): JSONSchemaProps {
  return (cachedSchema ??= buildOpenApiSchema());
}

/**
 * Validates `lp` (any parsed YAML/JSON) as admission would; with `old`, also the update rules
 * (immutable fields, partitions only growing). Returns no errors when the object would be admitted.
 */
export function validatePipeline(lp: unknown, old?: LogPipeline): ValidationError[] {
  if (typeof lp !== 'object' || lp === null || Array.isArray(lp)) {
    return [
      {
        field: '',
        type: 'FieldValueTypeInvalid',
        value: typeof lp,
        detail: 'a LogPipeline must be an object',
      },
    ];
  }
  const obj = lp as Record<string, unknown>;
  const errors: ValidationError[] = [];
  validateAgainstSchema(obj, schema(), '', errors);
  if (errors.some((e) => BLOCKING_ERROR_TYPES.has(e.type))) {
    errors.push({ field: '', type: 'FieldValueInvalid', value: null, detail: RULES_NOT_CHECKED });
    return [...validateTypeMeta(obj), ...errors];
  }
  errors.unshift(...validateTypeMeta(obj));
  for (const rule of PIPELINE_RULES) errors.push(...checkRule(rule, obj, old));
  return errors;
}

function validateTypeMeta(obj: Record<string, unknown>): ValidationError[] {
  const errors: ValidationError[] = [];
  if (obj.apiVersion !== API_VERSION) {
    errors.push({
      field: 'apiVersion',
      type: 'FieldValueNotSupported',
      value: obj.apiVersion,
      detail: `supported values: "${API_VERSION}"`,
    });
  }
  if (obj.kind !== KIND)
    errors.push({
      field: 'kind',
      type: 'FieldValueNotSupported',
      value: obj.kind,
      detail: `supported values: "${KIND}"`,
    });
  const meta = obj.metadata as { name?: unknown } | undefined;
  if (typeof meta?.name !== 'string' || meta.name === '') {
    errors.push({
      field: 'metadata.name',
      type: 'FieldValueRequired',
      detail: 'name or generateName is required',
    });
  } else if (meta.name.length > 253 || !DNS_SUBDOMAIN.test(meta.name)) {
    errors.push({
      field: 'metadata.name',
      type: 'FieldValueInvalid',
      value: meta.name,
      detail:
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
    });
  }
  return errors;
}

/** Every value at a rule location: `moves[]` fans out over the list, a missing step yields nothing. */
function locate(root: unknown, at: string): Array<{ field: string; value: unknown }> {
  let found: Array<{ field: string; value: unknown }> = [{ field: '', value: root }];
  for (const step of at.split('.')) {
    const isItems = step.endsWith('[]');
    const key = isItems ? step.slice(0, -2) : step;
    const next: typeof found = [];
    for (const { field, value } of found) {
      const child = (value as Record<string, unknown> | undefined)?.[key];
      if (child === undefined) continue;
      const childField = field ? `${field}.${key}` : key;
      if (!isItems) next.push({ field: childField, value: child });
      else if (Array.isArray(child))
        child.forEach((item, i) => next.push({ field: `${childField}[${i}]`, value: item }));
    }
    found = next;
  }
  return found;
}

function checkRule(
  rule: PipelineRule,
  obj: Record<string, unknown>,
  old: LogPipeline | undefined,
): ValidationError[] {
  if (rule.transition && !old) return [];
  const errors: ValidationError[] = [];
  for (const { field, value } of locate(obj, rule.at)) {
    let oldValue: unknown;
    if (rule.transition) {
      oldValue = locate(old, rule.at).find((o) => o.field === field)?.value;
      if (oldValue === undefined) continue;
    }
    if (rule.holds(value, oldValue)) continue;
    const type = rule.reason ?? 'FieldValueInvalid';
    const nodeType = schemaNodeAt(schema(), rule.at)?.type ?? 'object';
    errors.push({
      field: field + (rule.fieldPath ?? ''),
      type,
      ...(type === 'FieldValueInvalid' ? { value: nodeType } : {}),
      detail: rule.explain(value, oldValue),
      rule: rule.id,
    });
  }
  return errors;
}

const LABELS: Record<string, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueDuplicate: 'Duplicate value',
};

/** One line per error, worded like the apiserver (e.g. `spec.x: Invalid value: "a;b": …`). */
export function formatValidationError(e: ValidationError): string {
  if (e.type === 'UnknownField') return e.detail;
  const head = `${e.field || '<nil>'}: ${LABELS[e.type]}`;
  const value = 'value' in e ? `: ${JSON.stringify(e.value)}` : '';
  return `${head}${value}${e.detail ? `: ${e.detail}` : ''}`;
}
