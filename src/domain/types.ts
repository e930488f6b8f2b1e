// Schema value types shared by every layer. Plain data: no behaviour, no I/O.
export type FieldType = 'set' | 'int' | 'bool' | 'time' | 'mutex';
export type CacheType = 'ranked' | 'lru' | 'none';

export interface IndexOptions {
  keys: boolean;
  trackExistence: boolean;
}

export interface FieldOptions {
  type: FieldType;
  cacheType: CacheType;
  cacheSize: number;
  keys: boolean;
  /** int only; inclusive bounds, full signed 64-bit range by default */
  min: bigint;
  max: bigint;
  /** time only: subset of "YMDH" in order, e.g. "YMD" */
  timeQuantum: string;
  noStandardView: boolean;
}

export const INT64_MIN = -(1n << 63n);
export const INT64_MAX = (1n << 63n) - 1n;

export const DEFAULT_CACHE_SIZE = 50000;

export function defaultFieldOptions(type: FieldType = 'set'): FieldOptions {
  const cached = type === 'set' || type === 'mutex';
  return {
    type,
    cacheType: cached ? 'ranked' : 'none',
    cacheSize: cached ? DEFAULT_CACHE_SIZE : 0,
    keys: false,
    min: type === 'int' ? INT64_MIN : 0n,
    max: type === 'int' ? INT64_MAX : 0n,
    timeQuantum: '',
    noStandardView: false,
  };
}

/** Row and column attribute values (Pilosa: string, int64, float64, bool). */
export type AttrValue = string | bigint | number | boolean;
export type AttrMap = Record<string, AttrValue>;
/** An attribute update: null deletes the key. */
export type AttrPatch = Record<string, AttrValue | null>;
