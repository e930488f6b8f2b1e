// Field creation options: parse a request body's `options` object into FieldOptions with
// Pilosa 1.4's rules (docs/API.md §1.4), but answering bad options with 400, never 500.
import { badRequest } from '../domain/errors.js';
import { isValidTimeQuantum } from '../domain/time-quantum.js';
import {
  type CacheType,
  type FieldOptions,
  type FieldType,
  INT64_MAX,
  INT64_MIN,
  defaultFieldOptions,
} from '../domain/types.js';

const TYPES: readonly FieldType[] = ['set', 'int', 'bool', 'time', 'mutex'];
const ALLOWED: Record<FieldType, readonly string[]> = {
  set: ['type', 'cacheType', 'cacheSize', 'keys'],
  mutex: ['type', 'cacheType', 'cacheSize', 'keys'],
  int: ['type', 'min', 'max', 'keys'],
  time: ['type', 'timeQuantum', 'keys', 'noStandardView'],
  bool: ['type'],
};
const KNOWN = ['type', 'cacheType', 'cacheSize', 'keys', 'min', 'max', 'timeQuantum', 'noStandardView'];

export function parseFieldOptions(raw: unknown): FieldOptions {
  if (raw === undefined || raw === null) return defaultFieldOptions('set');
  if (typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('options is not an object');
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!KNOWN.includes(k)) throw badRequest(`unknown key: ${k}`);
  const typeRaw = o.type ?? 'set';
  if (typeof typeRaw !== 'string') throw badRequest('type must be a string');
  const type = (typeRaw === '' ? 'set' : typeRaw) as FieldType;
  if (!TYPES.includes(type)) throw badRequest(`invalid field type: ${typeRaw}`);
  for (const k of Object.keys(o))
    if (!ALLOWED[type].includes(k)) throw badRequest(`${k} does not apply to field type ${type}`);
  const opts = defaultFieldOptions(type);
  if (o.keys !== undefined) opts.keys = bool(o.keys, 'keys');
  if (o.cacheType !== undefined) {
    if (typeof o.cacheType !== 'string') throw badRequest('cacheType must be a string');
    const ct = o.cacheType.toLowerCase();
    if (ct !== 'ranked' && ct !== 'lru' && ct !== 'none')
      throw badRequest(`invalid cache type: ${o.cacheType} (ranked, lru or none)`);
    opts.cacheType = ct as CacheType;
  }
  if (o.cacheSize !== undefined) {
    const n = o.cacheSize;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 0xffffffff)
      throw badRequest('cacheSize must be a non-negative integer');
    opts.cacheSize = n;
  }
  if (opts.cacheType === 'none') opts.cacheSize = 0;
  if (type === 'int') {
    if (o.min !== undefined) opts.min = int64(o.min, 'min');
    if (o.max !== undefined) opts.max = int64(o.max, 'max');
    if (opts.min > opts.max) throw badRequest('int field min cannot be greater than max');
  }
  if (type === 'time') {
    if (o.timeQuantum === undefined || o.timeQuantum === '')
      throw badRequest('time quantum is required for a time field');
    if (typeof o.timeQuantum !== 'string' || !isValidTimeQuantum(o.timeQuantum.toUpperCase()))
      throw badRequest(`invalid time quantum: ${String(o.timeQuantum)}`);
    opts.timeQuantum = o.timeQuantum.toUpperCase();
    if (o.noStandardView !== undefined) opts.noStandardView = bool(o.noStandardView, 'noStandardView');
  }
  return opts;
}

function bool(v: unknown, name: string): boolean {
  if (typeof v !== 'boolean') throw badRequest(`${name} must be a boolean`);
  return v;
}

/** Accepts JSON numbers and the big-integer strings src/http/json-body.ts keeps exact. */
export function int64(v: unknown, name: string): bigint {
  let b: bigint;
  if (typeof v === 'number' && Number.isInteger(v)) b = BigInt(v);
  else if (typeof v === 'bigint') b = v;
  else if (typeof v === 'string' && /^-?\d+$/.test(v)) b = BigInt(v);
  else throw badRequest(`${name} must be an integer`);
  if (b < INT64_MIN || b > INT64_MAX) throw badRequest(`${name} is out of the signed 64-bit range`);
  return b;
}
