/** Schema of spec.clickhouse (see types.ts ClickHouseSpec). */
import { KEY_FUNCTIONS } from '../../../common/src/sql/key-functions';
import { DEFAULT_DELETE_AFTER, DEFAULT_FIREWALL_MINIMUM_DELETE_AFTER } from './defaults';
import {
  CONFIG_NAME_PATTERN,
  IDENTIFIER_PATTERN,
  bool,
  credentialsRef,
  duration,
  int,
  keyedList,
  list,
  obj,
  oneOf,
  str,
  type JSONSchemaProps,
} from './schema-dsl';
import { SOURCES } from '../../../common/src/columns/sources';

/** A column type name with optional parameters; no quotes other than single, no `;`, no backtick. */
export const COLUMN_TYPE_PATTERN = "^[A-Za-z][A-Za-z0-9]*(\\([A-Za-z0-9_ ,'()=.:/+-]*\\))?$";
/** A codec with optional numeric parameters, e.g. ZSTD(3), Delta(4), LZ4. */
export const CODEC_PATTERN = '^[A-Za-z][A-Za-z0-9]*(\\([0-9, ]*\\))?$';
/** A literal default: number, single-quoted string, NULL, true or false. */
export const LITERAL_PATTERN = "^(-?[0-9]+(\\.[0-9]+)?|'([^'\\\\]|\\\\.)*'|NULL|true|false)$";
/** Where a column value comes from: a parser output name, `static:<name>` or `field:<vendorKey>`. */
export const COLUMN_SOURCE_PATTERN = '^((static|field):[A-Za-z0-9_.-]{1,128}|[a-z_][a-z0-9_]{0,62})$';

const identifier = (description: string, maxLength = 63) =>
  str(description, { pattern: IDENTIFIER_PATTERN, maxLength });

const keyExpression = (description: string) =>
  obj(
    description,
    {
      column: identifier('Column name.'),
      function: oneOf(`Optional function applied to the column: ${KEY_FUNCTIONS.join(', ')}.`, KEY_FUNCTIONS),
    },
    ['column'],
  );

const column = obj(
  'One column of the table.',
  {
    name: identifier('Column name (identifier: letters, digits, underscore; at most 63 characters).'),
    type: str(
      'ClickHouse type, e.g. `LowCardinality(String)`, `IPv6`, `DateTime64(3)`; checked against a type grammar.',
      {
        pattern: COLUMN_TYPE_PATTERN,
        maxLength: 256,
      },
    ),
    source: str(
      `Where the value comes from: a standard source (${SOURCES.map((x) => `\`${x}\``).join(', ')}), \`static:<name>\` (spec.parser.staticFields) or \`field:<vendorKey>\`; anything else is refused at admission. The type must hold the value (e.g. ports need an integer or String, addresses IPv4/IPv6/String); the operator checks that with the worker's rules before deploying workers (condition reason InvalidColumns). Absent means the column only gets its default.`,
      { pattern: COLUMN_SOURCE_PATTERN, maxLength: 140 },
    ),
    codec: list(
      'Codec chain, e.g. ["Delta(4)", "ZSTD(1)"].',
      str('One codec.', { pattern: CODEC_PATTERN, maxLength: 64 }),
      4,
    ),
    default: str(
      'A literal default value (number, single-quoted string, NULL, true or false); never an expression.',
      {
        pattern: LITERAL_PATTERN,
        maxLength: 256,
      },
    ),
  },
  ['name', 'type'],
);

const move = obj(
  'A tiered-storage move: parts older than `after` go to exactly one of `toDisk` or `toVolume`.',
  {
    after: duration('Age of the rows (by the time column) at which they move, e.g. `30d`.'),
    toDisk: str('Destination disk of the storage policy. Exactly one of toDisk or toVolume.', {
      pattern: CONFIG_NAME_PATTERN,
      maxLength: 63,
    }),
    toVolume: str('Destination volume of the storage policy. Exactly one of toDisk or toVolume.', {
      pattern: CONFIG_NAME_PATTERN,
      maxLength: 63,
    }),
  },
  ['after'],
);

const retention = obj('Retention of the rows: tiered moves and final deletion, enforced by the table TTL.', {
  deleteAfter: duration(
    `Age at which rows are deleted. Default ${DEFAULT_DELETE_AFTER} (Law 5651: two years). Must be later than every moves[].after. Durations: a leading day count then Go units, e.g. 730d, 1d12h, 90m, 500ms.`,
  ),
  moves: list(
    'Moves to other disks or volumes before deletion (requires a storage policy with those disks/volumes).',
    move,
    8,
  ),
  materializeOnChange: bool(
    'Run MATERIALIZE TTL after a retention change so existing parts follow it (costly on large tables). Default false.',
  ),
  minimumDeleteAfter: duration(
    `Floor of deleteAfter, refused at admission when deleteAfter is shorter. Default ${DEFAULT_FIREWALL_MINIMUM_DELETE_AFTER} for the firewall preset (Law 5651), none for custom. Lowering it needs allowShortening.`,
  ),
  allowShortening: bool(
    'Explicit override that lets an update shorten deleteAfter (or lower minimumDeleteAfter, or remove either); without it such an update is refused at admission and the operator never shortens the TTL. Rows beyond the new retention are deleted for good: set it for that change, then remove it. Default false.',
  ),
});

/** spec.clickhouse */
export const clickhouseSchema: JSONSchemaProps = obj(
  'The ClickHouse table the workers insert into.',
  {
    url: str('HTTP(S) URL of ClickHouse, e.g. http://clickhouse.logs.svc:8123.', {
      pattern: '^https?://[^\\s]+$',
      maxLength: 2048,
    }),
    credentialsSecretRef: credentialsRef(
      'Secret with the credentials of the workers (keys `username` and `password` unless overridden).',
    ),
    adminCredentialsSecretRef: credentialsRef(
      'Optional admin credentials, used only to create the insert-only user of the workers and the read-only user of auditors.',
    ),
    database: identifier('Database name (identifier). Immutable.'),
    table: identifier(
      'Table name (identifier, at most 51 characters so the derived _dlq, _integrity and _checkpoints tables fit in 63). Immutable.',
      51,
    ),
    cluster: str(
      'ClickHouse cluster for ON CLUSTER DDL and Replicated tables. Absent means a single server.',
      {
        pattern: CONFIG_NAME_PATTERN,
        maxLength: 63,
      },
    ),
    preset: oneOf(
      'Schema preset: `firewall` (firewall/syslog columns) or `custom` (only `columns`). Default firewall.',
      ['firewall', 'custom'],
    ),
    columns: keyedList(
      'Extra columns appended to the preset, or every column with preset custom. Names are unique.',
      column,
      'name',
      128,
    ),
    partitionBy: keyExpression('Partition key. Default: the preset partition key.'),
    orderBy: list(
      'Sorting key, in order. Default: the preset sorting key.',
      keyExpression('One sorting-key element.'),
      8,
    ),
    timeColumn: identifier('Name of the timestamp column that TTL and partitioning use. Default `ts`.'),
    retention,
    storagePolicy: str('Storage policy of the table (must define the disks/volumes the moves name).', {
      pattern: CONFIG_NAME_PATTERN,
      maxLength: 63,
    }),
    dedupWindow: int(
      'Number of recent insert tokens the table remembers so a retried batch is not inserted twice (exactly once). Default 10000 (counted in inserts for the whole table, so size it to insert rate × the longest retry or restart you must survive).',
      1,
      100_000,
    ),
  },
  ['url', 'database', 'table'],
);
