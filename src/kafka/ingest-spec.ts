// Ingest definitions: how JSON records of a Kafka topic become bits. The mapping rules are those
// of the legacy input definitions (docs/API.md §6.5): value-to-row, mapping (valueMap),
// single-row-boolean (rowID), set-timestamp; plus int (an int field's value). A definition is
// validated against the schema when it is created; the stored form is the normalized JSON.
//
//   { "topic": "events", "index": "i",
//     "column": { "field": "id" } | { "key": "user" },      JSON property holding the column ID / key
//     "fields": [ { "name": "color", "field": "color", "mapping": "mapping", "valueMap": {"red": 1} },
//                 { "name": "age", "field": "age", "mapping": "int" },
//                 { "name": "active", "field": "flags", "mapping": "single-row-boolean", "rowID": 3 },
//                 { "name": "cat", "field": "cat", "mapping": "value-to-row" },
//                 { "name": "when", "field": "cat", "mapping": "timestamp" } ],
//     "deadLetterTopic": "events.dlq", "group": "bitledger-ingest-<name>", "batchMessages": 20000,
//     "unmappedProperties": "dead-letter" | "ignore", "deadLetterWarnRatio": 0.1 }
//
// Real event streams carry properties no field maps: with unmappedProperties "ignore" they are
// skipped and only the mapped properties are read (a field marked "required": true must be
// present); the default "dead-letter" keeps the strict rule. When more than deadLetterWarnRatio
// of a batch's records are dead-lettered, the runner warns in the log and counts it.
//
// A message holds one record (a JSON object) or several (a JSON array of objects); batchMessages
// bounds the messages imported per write (one LevelDB batch with their offsets).
import { badRequest, notFound } from '../domain/errors.js';
import { validateName } from '../domain/names.js';
import type { ReadonlyHolder } from '../state/readonly.js';

export type Mapping = 'value-to-row' | 'mapping' | 'single-row-boolean' | 'int' | 'timestamp';

export interface IngestFieldSpec {
  /** JSON property of the record. */
  name: string;
  /** Target field of the index. */
  field: string;
  mapping: Mapping;
  valueMap?: Record<string, number>;
  rowID?: number;
  /** A record without this property is dead-lettered. */
  required?: boolean;
}

export type UnmappedProperties = 'dead-letter' | 'ignore';

export interface IngestSpec {
  topic: string;
  index: string;
  column: { field: string } | { key: string };
  fields: IngestFieldSpec[];
  deadLetterTopic: string;
  group: string;
  batchMessages: number;
  /** Optional: definitions stored before these options read as the defaults. */
  unmappedProperties?: UnmappedProperties;
  deadLetterWarnRatio?: number;
}

export const DEFAULT_DEAD_LETTER_WARN_RATIO = 0.1;

const DEFAULT_BATCH_MESSAGES = 20_000;
const MAX_BATCH_MESSAGES = 200_000;
// Kafka's rule for topic names.
const TOPIC = /^[a-zA-Z0-9._-]{1,249}$/;
const MAPPINGS: Record<string, Mapping> = {
  'value-to-row': 'value-to-row',
  mapping: 'mapping',
  'single-row-boolean': 'single-row-boolean',
  int: 'int',
  timestamp: 'timestamp',
  'set-timestamp': 'timestamp', // the legacy name
};

function obj(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw badRequest(`${what} must be a JSON object`);
  return v as Record<string, unknown>;
}

function str(v: unknown, what: string): string {
  if (typeof v !== 'string' || v === '') throw badRequest(`${what} must be a non-empty string`);
  return v;
}

function onlyKeys(o: Record<string, unknown>, allowed: string[], what: string): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) throw badRequest(`unknown key in ${what}: ${k}`);
}

/** Legacy keys match case-insensitively (rowID, rowid); other keys are taken as written. */
function rowIdOf(o: Record<string, unknown>): unknown {
  for (const [k, v] of Object.entries(o)) if (k.toLowerCase() === 'rowid') return v;
  return undefined;
}

function rowNumber(v: unknown, what: string): number {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
    throw badRequest(`${what} must be a non-negative integer`);
  return n;
}

/** Parses and normalizes a definition body (shape only; see validateAgainstSchema). */
export function parseIngestSpec(name: string, body: unknown): IngestSpec {
  validateName(name);
  const b = obj(body, 'ingest definition');
  onlyKeys(
    b,
    [
      'topic',
      'index',
      'column',
      'fields',
      'deadLetterTopic',
      'group',
      'batchMessages',
      'unmappedProperties',
      'deadLetterWarnRatio',
    ],
    'ingest definition',
  );
  const topic = str(b.topic, 'topic');
  if (!TOPIC.test(topic)) throw badRequest(`invalid topic name: ${topic}`);
  const index = str(b.index, 'index');
  const c = obj(b.column, 'column');
  onlyKeys(c, ['field', 'key'], 'column');
  if ((c.field === undefined) === (c.key === undefined))
    throw badRequest(
      'column needs exactly one of field (JSON property with the column ID) or key (JSON property with the column key)',
    );
  const column: IngestSpec['column'] =
    c.field !== undefined ? { field: str(c.field, 'column.field') } : { key: str(c.key, 'column.key') };
  if (!Array.isArray(b.fields) || b.fields.length === 0) throw badRequest('fields must be a non-empty array');
  const fields = b.fields.map((f, i) => parseField(obj(f, `fields[${i}]`), i));
  const columnProp = 'field' in column ? column.field : column.key;
  // One property may feed several fields (legacy: several actions per field), never the column.
  for (const f of fields)
    if (f.name === columnProp) throw badRequest(`JSON property ${f.name} is the column; it cannot also fill a field`);
  checkDuplicateRowIds(fields);
  const deadLetterTopic = b.deadLetterTopic === undefined ? `${topic}.dlq` : str(b.deadLetterTopic, 'deadLetterTopic');
  if (!TOPIC.test(deadLetterTopic)) throw badRequest(`invalid deadLetterTopic name: ${deadLetterTopic}`);
  if (deadLetterTopic === topic) throw badRequest('deadLetterTopic must differ from topic');
  const group = b.group === undefined ? `bitledger-ingest-${name}` : str(b.group, 'group');
  const batchMessages =
    b.batchMessages === undefined ? DEFAULT_BATCH_MESSAGES : rowNumber(b.batchMessages, 'batchMessages');
  if (batchMessages < 1 || batchMessages > MAX_BATCH_MESSAGES)
    throw badRequest(`batchMessages must be between 1 and ${MAX_BATCH_MESSAGES}`);
  const unmappedProperties = b.unmappedProperties ?? 'dead-letter';
  if (unmappedProperties !== 'dead-letter' && unmappedProperties !== 'ignore')
    throw badRequest(`unmappedProperties must be "dead-letter" or "ignore", got ${JSON.stringify(unmappedProperties)}`);
  const deadLetterWarnRatio = b.deadLetterWarnRatio ?? DEFAULT_DEAD_LETTER_WARN_RATIO;
  if (typeof deadLetterWarnRatio !== 'number' || !(deadLetterWarnRatio >= 0 && deadLetterWarnRatio <= 1))
    throw badRequest('deadLetterWarnRatio must be a number from 0 to 1');
  return {
    topic,
    index,
    column,
    fields,
    deadLetterTopic,
    group,
    batchMessages,
    unmappedProperties,
    deadLetterWarnRatio,
  };
}

function parseField(f: Record<string, unknown>, i: number): IngestFieldSpec {
  for (const k of Object.keys(f)) {
    if (!['name', 'field', 'mapping', 'valueMap', 'required'].includes(k) && k.toLowerCase() !== 'rowid')
      throw badRequest(`unknown key in fields[${i}]: ${k}`);
  }
  const name = str(f.name, `fields[${i}].name`);
  const field = str(f.field, `fields[${i}].field`);
  const raw = str(f.mapping, `fields[${i}].mapping`);
  const mapping = MAPPINGS[raw];
  if (mapping === undefined) throw badRequest(`invalid mapping: ${raw} (valid: ${Object.keys(MAPPINGS).join(', ')})`);
  const out: IngestFieldSpec = { name, field, mapping };
  if (f.required !== undefined) {
    if (typeof f.required !== 'boolean') throw badRequest(`fields[${i}].required must be a boolean`);
    if (f.required) out.required = true;
  }
  if (mapping === 'mapping') {
    const vm = obj(f.valueMap, `valueMap required for mapping (fields[${i}])`);
    out.valueMap = {};
    for (const [k, v] of Object.entries(vm)) out.valueMap[k] = rowNumber(v, `fields[${i}].valueMap.${k}`);
  } else if (f.valueMap !== undefined) throw badRequest(`fields[${i}]: valueMap is only for mapping`);
  const rowID = rowIdOf(f);
  if (mapping === 'single-row-boolean') {
    if (rowID === undefined) throw badRequest(`rowID required for single-row-boolean field ${name}`);
    out.rowID = rowNumber(rowID, `fields[${i}].rowID`);
  } else if (rowID !== undefined) throw badRequest(`fields[${i}]: rowID is only for single-row-boolean`);
  return out;
}

/** Legacy rule: two single-row-boolean properties must not claim the same row of one field. */
function checkDuplicateRowIds(fields: IngestFieldSpec[]): void {
  const used = new Map<string, string>();
  for (const f of fields) {
    if (f.rowID === undefined) continue;
    const k = `${f.field}/${f.rowID}`;
    const other = used.get(k);
    if (other !== undefined)
      throw badRequest(
        `duplicate rowID with other field: ${other} and ${f.name} both set row ${f.rowID} of ${f.field}`,
      );
    used.set(k, f.name);
  }
}

/** Checks the definition against the schema: the index and fields exist and suit the mappings. */
export function validateAgainstSchema(spec: IngestSpec, holder: ReadonlyHolder): void {
  const index = holder.index(spec.index);
  if (index === undefined) throw notFound(`index ${spec.index} not found`);
  if ('key' in spec.column && !index.options.keys)
    throw badRequest(`column.key needs an index with keys; ${spec.index} has integer columns (use column.field)`);
  if ('field' in spec.column && index.options.keys)
    throw badRequest(`index ${spec.index} has string keys: use column.key`);
  const stamped = new Set(spec.fields.filter((f) => f.mapping === 'timestamp').map((f) => f.field));
  for (const f of spec.fields) {
    const field = index.field(f.field);
    if (field === undefined || f.field.startsWith('_'))
      throw notFound(`field ${f.field} not found in index ${spec.index}`);
    const { type, keys } = field.options;
    if (f.mapping === 'int') {
      if (type !== 'int') throw badRequest(`mapping int needs an int field; ${f.field} is ${type}`);
    } else if (type === 'int') {
      throw badRequest(`int field ${f.field} takes mapping int, not ${f.mapping}`);
    } else if (f.mapping === 'timestamp') {
      if (type !== 'time') throw badRequest(`mapping timestamp needs a time field; ${f.field} is ${type}`);
      if (!spec.fields.some((o) => o.field === f.field && o.mapping !== 'timestamp'))
        throw badRequest(`timestamp for ${f.field}, but no property sets bits in ${f.field}`);
    } else if (keys && f.mapping !== 'value-to-row') {
      throw badRequest(`field ${f.field} has string row keys: only value-to-row (with string values) can fill it`);
    } else if (type === 'bool') {
      const rows = f.mapping === 'single-row-boolean' ? [f.rowID ?? 0] : Object.values(f.valueMap ?? {});
      if (rows.some((r) => r > 1)) throw badRequest(`bool field ${f.field} takes rows 0 and 1 only`);
    }
    if (
      stamped.has(f.field) &&
      spec.fields.filter((o) => o.field === f.field && o.mapping === 'timestamp').length > 1
    ) {
      throw badRequest(`more than one timestamp property for field ${f.field}`);
    }
  }
}
