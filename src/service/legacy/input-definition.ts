// Legacy input definitions (0.5–0.9, docs/API.md §6.5): parsed case-insensitively (the docs write
// `rowid`, the code `rowID`), validated with Pilosa's rules and messages, kept in canonical form
// (that form is what GET answers and what is stored).
import { badRequest } from '../../domain/errors.js';
import { validateName } from '../../domain/names.js';
import { parseFrameOptions } from './frame-options.js';

export const DESTINATIONS = ['mapping', 'value-to-row', 'single-row-boolean', 'set-timestamp'] as const;
export type Destination = (typeof DESTINATIONS)[number];

export interface InputAction {
  frame: string;
  valueDestination: Destination;
  valueMap?: Record<string, number>;
  rowID?: number;
}

export interface InputField {
  name: string;
  primaryKey?: boolean;
  actions?: InputAction[];
}

export interface InputDefinition {
  /** options: frame options as given (validated by parseFrameOptions; int `fields` not allowed here). */
  frames: { name: string; options?: Record<string, unknown> }[];
  fields: InputField[];
}

/** Structure and per-action rules; the primary key is checked against the index's column label. */
export function parseInputDefinition(body: unknown, columnLabel: string): InputDefinition {
  const b = lowerKeys(body, 'input definition');
  const frames = b.frames;
  const fields = b.fields;
  if (!Array.isArray(frames) || !Array.isArray(fields) || frames.length === 0 || fields.length === 0)
    throw badRequest('frames and fields are required');
  const def: InputDefinition = { frames: frames.map(parseFrame), fields: [] };
  const singleRows = new Set<string>();
  let primaryKeys = 0;
  for (const raw of fields) {
    const f = lowerKeys(raw, 'field');
    if (typeof f.name !== 'string' || f.name === '') throw badRequest('field name required');
    const field: InputField = { name: f.name };
    if (f.primarykey !== undefined) {
      if (typeof f.primarykey !== 'boolean') throw badRequest('primaryKey must be a boolean');
      field.primaryKey = f.primarykey;
    }
    if (field.primaryKey === true) {
      primaryKeys++;
      if (field.name !== columnLabel) throw badRequest('PrimaryKey field name does not match columnLabel');
    }
    const actions = f.actions === undefined || f.actions === null ? [] : f.actions;
    if (!Array.isArray(actions)) throw badRequest('actions must be an array');
    if (actions.length === 0 && field.primaryKey !== true) throw badRequest('field definitions require an action');
    if (actions.length > 0) field.actions = actions.map((a) => parseAction(a, field.name));
    for (const a of field.actions ?? []) {
      if (a.valueDestination !== 'single-row-boolean') continue;
      const key = `${a.frame}\u0000${a.rowID}`;
      if (singleRows.has(key)) throw badRequest(`duplicate rowID with other field: ${a.rowID}`);
      singleRows.add(key);
    }
    def.fields.push(field);
  }
  if (primaryKeys === 0) throw badRequest('input-definition must contain one PrimaryKey');
  if (primaryKeys > 1) throw badRequest('input-definition can only contain one PrimaryKey');
  return def;
}

function parseFrame(raw: unknown): { name: string; options?: Record<string, unknown> } {
  const f = lowerKeys(raw, 'frame');
  if (typeof f.name !== 'string') throw badRequest('frame name required');
  validateName(f.name);
  if (f.options === undefined || f.options === null) return { name: f.name };
  const o = lowerKeys(f.options, 'frame options');
  // Canonical 0.x spellings; anything else is refused by parseFrameOptions.
  const canon: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) canon[FRAME_OPTION[k] ?? k] = v;
  if (canon.fields !== undefined) throw badRequest('Unknown key: fields');
  parseFrameOptions(canon);
  return { name: f.name, options: canon };
}

const FRAME_OPTION: Record<string, string> = {
  rowlabel: 'rowLabel',
  timequantum: 'timeQuantum',
  inverseenabled: 'inverseEnabled',
  cachetype: 'cacheType',
  cachesize: 'cacheSize',
  rangeenabled: 'rangeEnabled',
};

function parseAction(raw: unknown, field: string): InputAction {
  const a = lowerKeys(raw, 'action');
  if (typeof a.frame !== 'string' || a.frame === '') throw badRequest('frame required');
  const dest = a.valuedestination;
  if (typeof dest !== 'string' || !(DESTINATIONS as readonly string[]).includes(dest))
    throw badRequest(`invalid ValueDestination: ${String(dest)}`);
  const action: InputAction = { frame: a.frame, valueDestination: dest as Destination };
  if (a.valuemap !== undefined && a.valuemap !== null) {
    const m = lowerKeys(a.valuemap, 'valueMap', false);
    for (const [k, v] of Object.entries(m))
      if (!isRowId(v)) throw badRequest(`valueMap value for ${k} must be an unsigned integer`);
    action.valueMap = m as Record<string, number>;
  }
  if (a.rowid !== undefined && a.rowid !== null) {
    if (!isRowId(a.rowid)) throw badRequest('rowID must be an unsigned integer');
    action.rowID = a.rowid;
  }
  if (dest === 'mapping' && action.valueMap === undefined) throw badRequest('valueMap required for map');
  if (dest === 'single-row-boolean' && action.rowID === undefined)
    throw badRequest(`rowID required for single-row-boolean Field ${field}`);
  return action;
}

function isRowId(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** Go's encoding/json matches keys case-insensitively; `lower` = false keeps map keys as they are. */
function lowerKeys(v: unknown, what: string, lower = true): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw badRequest(`${what} must be a JSON object`);
  if (!lower) return { ...(v as Record<string, unknown>) };
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(v)) out[k.toLowerCase()] = val;
  return out;
}
