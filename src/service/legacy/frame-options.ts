// Legacy frame options (0.5–0.10, docs/API.md §6.2) parsed from request bodies, and the current
// field options a frame maps to: a time quantum (the frame's, else the index default) makes a
// time field, otherwise a set field with the frame's cache; `fields` become int fields.
import { badRequest } from '../../domain/errors.js';
import { argumentRequired } from '../../domain/messages.js';
import { validateName } from '../../domain/names.js';
import { isValidTimeQuantum } from '../../domain/time-quantum.js';
import { type CacheType, type FieldOptions, DEFAULT_CACHE_SIZE } from '../../domain/types.js';
import { int64, parseFieldOptions } from '../field-options.js';
import { DEFAULT_ROW_LABEL } from '../../pql/legacy.js';
import { type FrameMeta, intFieldName } from './legacy-meta.js';

export interface FrameIntField {
  name: string;
  min?: bigint;
  max?: bigint;
}

export interface FrameOptionsInput {
  rowLabel?: string;
  timeQuantum?: string;
  inverseEnabled?: boolean;
  cacheType?: CacheType;
  cacheSize?: number;
  rangeEnabled?: boolean;
  fields: FrameIntField[];
}

/** Pilosa 0.x label rule (rowLabel, columnLabel). */
const LABEL = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

export function validateLabel(label: string, what: string): void {
  if (!LABEL.test(label))
    throw badRequest(`invalid ${what}: '${label}' must match [A-Za-z][A-Za-z0-9_-]* and contain at most 64 characters`);
}

/** `{options:{…}}`; older examples also put rangeEnabled and fields at the top level. */
export function parseFrameBody(body: unknown): FrameOptionsInput {
  if (body === undefined || body === null) return { fields: [] };
  const b = object(body, 'request body');
  const top: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(b)) {
    if (k === 'options') continue;
    if (k !== 'rangeEnabled' && k !== 'fields') throw badRequest(`Unknown key: ${k}`);
    top[k] = v;
  }
  const opts = b.options === undefined || b.options === null ? {} : object(b.options, 'options');
  return parseFrameOptions({ ...top, ...opts });
}

export function parseFrameOptions(raw: unknown): FrameOptionsInput {
  const o = raw === undefined || raw === null ? {} : object(raw, 'options');
  const out: FrameOptionsInput = { fields: [] };
  for (const [k, v] of Object.entries(o)) {
    switch (k) {
      case 'rowLabel':
        if (typeof v !== 'string') throw badRequest('rowLabel must be a string');
        if (v !== '') validateLabel(v, 'rowLabel');
        out.rowLabel = v === '' ? undefined : v;
        break;
      case 'timeQuantum':
        out.timeQuantum = quantum(v);
        break;
      case 'inverseEnabled':
      case 'rangeEnabled':
        if (typeof v !== 'boolean') throw badRequest(`${k} must be a boolean`);
        out[k] = v;
        break;
      case 'cacheType': {
        if (typeof v !== 'string') throw badRequest('cacheType must be a string');
        // The 0.x docs write `LRU`; Pilosa's values are lowercase.
        const ct = v.toLowerCase();
        if (ct !== 'ranked' && ct !== 'lru' && ct !== 'none')
          throw badRequest(`invalid cache type: ${v} (ranked, lru or none)`);
        out.cacheType = ct;
        break;
      }
      case 'cacheSize':
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff)
          throw badRequest('cacheSize must be a non-negative integer');
        out.cacheSize = v;
        break;
      case 'fields':
        if (v === null) break;
        if (!Array.isArray(v)) throw badRequest('fields must be an array');
        out.fields = v.map((f) => parseIntField(f, false));
        break;
      default:
        throw badRequest(`Unknown key: ${k}`);
    }
  }
  const names = new Set<string>();
  for (const f of out.fields) {
    if (names.has(f.name)) throw badRequest(`duplicate field name: ${f.name}`);
    names.add(f.name);
  }
  return out;
}

/** A frame int field `{name?, type, min, max}`; `strict` (POST …/field/{name}) requires all three. */
export function parseIntField(raw: unknown, strict: boolean, name?: string): FrameIntField {
  const o = object(raw ?? {}, 'field');
  for (const k of Object.keys(o))
    if (!['name', 'type', 'min', 'max'].includes(k)) throw badRequest(`Unknown key: ${k}`);
  const n = name ?? o.name;
  if (typeof n !== 'string' || n === '') throw badRequest('field name is required');
  validateName(n);
  if (strict) for (const k of ['type', 'min', 'max']) if (o[k] === undefined) throw argumentRequired(k);
  if (o.type !== undefined && o.type !== 'int')
    throw badRequest(`invalid field type: ${String(o.type)} (only int is supported)`);
  const f: FrameIntField = { name: n };
  if (o.min !== undefined) f.min = int64(o.min, 'min');
  if (o.max !== undefined) f.max = int64(o.max, 'max');
  if (f.min !== undefined && f.max !== undefined && f.min > f.max)
    throw badRequest('int field min cannot be greater than max');
  return f;
}

export function quantum(v: unknown): string {
  if (typeof v !== 'string') throw badRequest('timeQuantum must be a string');
  const q = v.toUpperCase();
  if (!isValidTimeQuantum(q)) throw badRequest(`invalid time quantum: ${v}`);
  return q;
}

/** The current field a frame maps to, given the index's default time quantum. */
export function frameFieldOptions(input: FrameOptionsInput, indexQuantum: string): FieldOptions {
  const q = input.timeQuantum ?? indexQuantum;
  const cache = { cacheType: input.cacheType ?? 'ranked', cacheSize: input.cacheSize ?? DEFAULT_CACHE_SIZE };
  // 0.x time frames kept a ranked cache (TopN works on them); 1.x time fields have none, so the
  // cache options are set on the time field directly rather than through the 1.x option rules.
  if (q !== '') return { ...parseFieldOptions({ type: 'time', timeQuantum: q }), ...cache };
  return parseFieldOptions({ type: 'set', ...cache });
}

export function intFieldOptions(frame: string, f: FrameIntField): { name: string; options: FieldOptions } {
  const name = intFieldName(frame, f.name);
  validateName(name);
  return {
    name,
    options: parseFieldOptions({
      type: 'int',
      ...(f.min !== undefined ? { min: f.min } : {}),
      ...(f.max !== undefined ? { max: f.max } : {}),
    }),
  };
}

export function frameMetaFrom(input: FrameOptionsInput, options: FieldOptions): FrameMeta {
  return {
    rowLabel: input.rowLabel ?? DEFAULT_ROW_LABEL,
    inverseEnabled: input.inverseEnabled ?? false,
    cacheType: input.cacheType ?? 'ranked',
    cacheSize: input.cacheSize ?? (input.cacheType === 'none' ? 0 : DEFAULT_CACHE_SIZE),
    timeQuantum: options.timeQuantum,
    rangeEnabled: input.rangeEnabled ?? false,
    fields: input.fields.map((f) => f.name),
  };
}

function object(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw badRequest(`${what} must be a JSON object`);
  return v as Record<string, unknown>;
}
