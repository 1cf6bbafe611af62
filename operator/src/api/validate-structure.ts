/**
 * Structural validation of a value against the CRD's OpenAPI schema, reporting errors with the same
 * field paths, types and wording as kube-apiserver (kube-openapi), so offline checks read like
 * admission. Only the keywords the LogPipeline schema uses are implemented.
 */
import type { JSONSchemaProps } from './schema-dsl';

/** Error types as k8s.io/apimachinery field.ErrorType names them (plus strict decoding's unknown field). */
export type ValidationErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueTypeInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueDuplicate'
  | 'UnknownField';

/** One validation failure, as admission would report it. */
export interface ValidationError {
  /** Field path in apiserver notation, e.g. `spec.clickhouse.retention.moves[0]`; '' for the whole object. */
  field: string;
  type: ValidationErrorType;
  /** The offending value as the apiserver prints it (for Invalid, NotSupported, TooMany, Duplicate). */
  value?: unknown;
  /** Explanation without the field path prefix. */
  detail: string;
  /** Id of the cross-field rule (validate-rules.ts) that failed, if any. */
  rule?: string;
}

/** Error types after which the apiserver does not run CEL rules (their cost bounds no longer hold). */
export const BLOCKING_ERROR_TYPES: ReadonlySet<ValidationErrorType> = new Set([
  'FieldValueRequired',
  'FieldValueTypeInvalid',
  'FieldValueNotSupported',
  'FieldValueTooLong',
  'FieldValueTooMany',
]);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** JSON-schema type name of a value, as the apiserver words type errors. */
function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(v: unknown, s: JSONSchemaProps): boolean {
  if (s['x-kubernetes-int-or-string'])
    return typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));
  switch (s.type) {
    case 'object':
      return isPlainObject(v);
    case 'array':
      return Array.isArray(v);
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'string':
      return typeof v === 'string';
    case 'boolean':
      return typeof v === 'boolean';
    default:
      return true;
  }
}

const regexCache = new Map<string, RegExp>();
function regex(pattern: string): RegExp {
  let re = regexCache.get(pattern);
  if (!re) regexCache.set(pattern, (re = new RegExp(pattern)));
  return re;
}

/** Validates `value` (located at `field`) against `schema`, appending to `errors`. */
export function validateAgainstSchema(
  value: unknown,
  schema: JSONSchemaProps,
  field: string,
  errors: ValidationError[],
): void {
  if (!typeMatches(value, schema)) {
    const t = typeName(value);
    const want = schema.type ?? 'integer or string';
    errors.push({
      field,
      type: 'FieldValueTypeInvalid',
      value: t,
      detail: `${field} in body must be of type ${want}: "${t}"`,
    });
    return;
  }
  if (isPlainObject(value)) validateObject(value, schema, field, errors);
  else if (Array.isArray(value)) validateArray(value, schema, field, errors);
  else if (typeof value === 'string') validateString(value, schema, field, errors);
  else if (typeof value === 'number') validateNumber(value, schema, field, errors);
}

function validateObject(
  value: Record<string, unknown>,
  schema: JSONSchemaProps,
  field: string,
  errors: ValidationError[],
): void {
  const at = (k: string) => (field ? `${field}.${k}` : k);
  for (const k of schema.required ?? []) {
    if (value[k] === undefined) errors.push({ field: at(k), type: 'FieldValueRequired', detail: '' });
  }
  const count = Object.keys(value).length;
  if (schema.maxProperties !== undefined && count > schema.maxProperties) {
    errors.push({
      field,
      type: 'FieldValueTooMany',
      value: count,
      detail: `must have at most ${schema.maxProperties} items`,
    });
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    const prop = schema.properties?.[k] ?? schema.additionalProperties;
    if (prop) validateAgainstSchema(v, prop, at(k), errors);
    else if (!schema['x-kubernetes-preserve-unknown-fields'] && schema.properties) {
      errors.push({ field: at(k), type: 'UnknownField', detail: `unknown field "${at(k)}"` });
    }
  }
}

function validateArray(
  value: unknown[],
  schema: JSONSchemaProps,
  field: string,
  errors: ValidationError[],
): void {
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    errors.push({
      field,
      type: 'FieldValueTooMany',
      value: value.length,
      detail: `must have at most ${schema.maxItems} items`,
    });
    return;
  }
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    errors.push({
      field,
      type: 'FieldValueInvalid',
      value: value.length,
      detail: `${field} in body should have at least ${schema.minItems} items`,
    });
  }
  value.forEach(
    (item, i) => schema.items && validateAgainstSchema(item, schema.items, `${field}[${i}]`, errors),
  );
  const keys = schema['x-kubernetes-list-type'] === 'map' ? (schema['x-kubernetes-list-map-keys'] ?? []) : [];
  if (keys.length > 0) reportDuplicateKeys(value, keys, field, errors);
}

function reportDuplicateKeys(
  value: unknown[],
  keys: string[],
  field: string,
  errors: ValidationError[],
): void {
  const seen = new Set<string>();
  value.forEach((item, i) => {
    if (!isPlainObject(item)) return;
    const key: Record<string, unknown> = {};
    for (const k of keys) key[k] = item[k];
    const text = JSON.stringify(key);
    if (seen.has(text))
      errors.push({ field: `${field}[${i}]`, type: 'FieldValueDuplicate', value: key, detail: '' });
    seen.add(text);
  });
}

function validateString(
  value: string,
  schema: JSONSchemaProps,
  field: string,
  errors: ValidationError[],
): void {
  if (schema.enum && !schema.enum.includes(value)) {
    const supported = schema.enum.map((e) => JSON.stringify(e)).join(', ');
    errors.push({ field, type: 'FieldValueNotSupported', value, detail: `supported values: ${supported}` });
    return;
  }
  // The apiserver measures bytes; a too-long value is not also reported for its pattern.
  if (schema.maxLength !== undefined && Buffer.byteLength(value, 'utf8') > schema.maxLength) {
    errors.push({
      field,
      type: 'FieldValueTooLong',
      detail: `may not be more than ${schema.maxLength} bytes`,
    });
    return;
  }
  if (schema.minLength !== undefined && value.length < schema.minLength) {
    errors.push({
      field,
      type: 'FieldValueInvalid',
      value,
      detail: `${field} in body should be at least ${schema.minLength} chars long`,
    });
  }
  if (schema.pattern !== undefined && !regex(schema.pattern).test(value)) {
    errors.push({
      field,
      type: 'FieldValueInvalid',
      value,
      detail: `${field} in body should match '${schema.pattern}'`,
    });
  }
}

function validateNumber(
  value: number,
  schema: JSONSchemaProps,
  field: string,
  errors: ValidationError[],
): void {
  if (schema.minimum !== undefined && value < schema.minimum) {
    errors.push({
      field,
      type: 'FieldValueInvalid',
      value,
      detail: `${field} in body should be greater than or equal to ${schema.minimum}`,
    });
  }
  if (schema.maximum !== undefined && value > schema.maximum) {
    errors.push({
      field,
      type: 'FieldValueInvalid',
      value,
      detail: `${field} in body should be less than or equal to ${schema.maximum}`,
    });
  }
}
