/**
 * A small vocabulary for writing the LogPipeline OpenAPI v3 schema in TypeScript. Every builder takes
 * the description first so no field can be declared without one (`kubectl explain` shows it), and
 * every string gets a maxLength so the apiserver's CEL cost estimator has bounds to work with.
 */
import { DURATION_PATTERN } from './duration';

/** One CEL rule as it appears under `x-kubernetes-validations`. */
export interface CelRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

/** The subset of apiextensions.k8s.io/v1 JSONSchemaProps the LogPipeline schema uses. */
export interface JSONSchemaProps {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  format?: string;
  properties?: Record<string, JSONSchemaProps>;
  required?: string[];
  additionalProperties?: JSONSchemaProps;
  items?: JSONSchemaProps;
  enum?: string[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  maxProperties?: number;
  anyOf?: JSONSchemaProps[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-validations'?: CelRule[];
}

/** ClickHouse database/table/column names: plain identifiers, so quoting is never ambiguous. */
export { IDENTIFIER_PATTERN } from '../../../common/src/sql/identifiers';
/** Kafka topic names as Kafka itself accepts them. */
export const TOPIC_PATTERN = '^[A-Za-z0-9._-]{1,249}$';
/** Names of Kubernetes objects in the same namespace (DNS-1123 subdomain). */
export const K8S_NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
/** Keys inside a Secret. */
export const SECRET_KEY_PATTERN = '^[-._a-zA-Z0-9]+$';
/** Names from the ClickHouse server config (clusters, disks, volumes, storage policies). */
export const CONFIG_NAME_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$';
/** Kubernetes resource quantities, as in core/v1. */
export const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';
/** Longest duration text accepted; keeps CEL conversion cheap and bounded. */
export const DURATION_MAX_LENGTH = 32;

/** Options shared by string fields. */
export interface StringOptions {
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  format?: string;
}

/** A string field; maxLength defaults to 253 (a Kubernetes name) so every string is bounded. */
export function str(description: string, opts: StringOptions = {}): JSONSchemaProps {
  return { type: 'string', description, ...opts, maxLength: opts.maxLength ?? 253 };
}

/** A string restricted to `values`. */
export function oneOf(description: string, values: readonly string[]): JSONSchemaProps {
  return { type: 'string', description, enum: [...values] };
}

/** A duration string such as `730d`, `1d12h`, `90s` or `500ms` (see duration.ts for the grammar). */
export function duration(description: string): JSONSchemaProps {
  return str(description, { pattern: DURATION_PATTERN, maxLength: DURATION_MAX_LENGTH });
}

/** An integer field with inclusive bounds. */
export function int(
  description: string,
  minimum: number,
  maximum: number,
  format?: 'int32' | 'int64',
): JSONSchemaProps {
  const fmt = format ?? (maximum > 2_147_483_647 ? 'int64' : 'int32');
  return { type: 'integer', format: fmt, description, minimum, maximum };
}

/** A number (possibly fractional) field. */
export function num(description: string): JSONSchemaProps {
  return { type: 'number', description };
}

/** A boolean field. */
export function bool(description: string): JSONSchemaProps {
  return { type: 'boolean', description };
}

/** An object with known properties; unknown properties are rejected (kubectl) or pruned (apiserver). */
export function obj(
  description: string,
  properties: Record<string, JSONSchemaProps>,
  required: string[] = [],
): JSONSchemaProps {
  return required.length > 0
    ? { type: 'object', description, properties, required }
    : { type: 'object', description, properties };
}

/** An object kept as-is (a Kubernetes core type embedded without its full schema). */
export function opaque(
  description: string,
  properties?: Record<string, JSONSchemaProps>,
  required: string[] = [],
): JSONSchemaProps {
  return {
    ...(properties ? obj(description, properties, required) : { type: 'object', description }),
    'x-kubernetes-preserve-unknown-fields': true,
  };
}

/** A list with a size bound; `atomic` unless the caller makes it a map. */
export function list(
  description: string,
  items: JSONSchemaProps,
  maxItems: number,
  minItems?: number,
): JSONSchemaProps {
  return { type: 'array', description, items, maxItems, ...(minItems ? { minItems } : {}) };
}

/** A list whose items are identified by `key` (server-side apply merges by it; duplicates are rejected). */
export function keyedList(
  description: string,
  items: JSONSchemaProps,
  key: string,
  maxItems: number,
): JSONSchemaProps {
  return {
    ...list(description, items, maxItems),
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': [key],
  };
}

/** A string-to-`values` map with a size bound. */
export function dict(description: string, values: JSONSchemaProps, maxProperties: number): JSONSchemaProps {
  return { type: 'object', description, additionalProperties: values, maxProperties };
}

/** A Kubernetes quantity (`500m`, `1Gi`, `2`). */
export function quantity(description: string): JSONSchemaProps {
  return {
    description,
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    pattern: QUANTITY_PATTERN,
    'x-kubernetes-int-or-string': true,
  };
}

/** Reference to a Secret in the pipeline's namespace with overridable username/password keys. */
export function credentialsRef(description: string): JSONSchemaProps {
  return obj(
    description,
    {
      name: str('Name of the Secret in the LogPipeline namespace.', {
        pattern: K8S_NAME_PATTERN,
        minLength: 1,
      }),
      usernameKey: str('Key of the user name in the Secret. Default `username`.', {
        pattern: SECRET_KEY_PATTERN,
      }),
      passwordKey: str('Key of the password in the Secret. Default `password`.', {
        pattern: SECRET_KEY_PATTERN,
      }),
    },
    ['name'],
  );
}

/** Reference to one key of a Secret in the pipeline's namespace. */
export function secretKeyRef(description: string, keyDescription: string): JSONSchemaProps {
  return obj(
    description,
    {
      name: str('Name of the Secret in the LogPipeline namespace.', {
        pattern: K8S_NAME_PATTERN,
        minLength: 1,
      }),
      key: str(keyDescription, { pattern: SECRET_KEY_PATTERN }),
    },
    ['name', 'key'],
  );
}
