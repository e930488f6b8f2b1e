// Argument readers with Pilosa's error texts (v1.4.0 pql/ast.go UintArg/IntArg/FieldArg), and the
// `executing: …` error factory. Go renders values with %v and types with %T; goValue/goType do
// the same for our AST so messages read like Pilosa's.
import { badRequest, notFound } from '../domain/errors.js';
import { ZERO_TIME, isDateTime, parseTimestamp, timeFromUnixSeconds } from '../domain/time-quantum.js';
import type { Call, Value } from '../pql/ast.js';
import { WRITE_CALL_NAMES } from '../pql/call-names.js';

/** Throws the request's error. Prefixes (`map reduce: `, …) are baked in by whoever builds it. */
export type Fail = (msg: string) => never;

/** An unknown field is a 404 (Pilosa answers 400 for every query error; we name it right). */
const FIELD_NOT_FOUND = /^field (".*" )?not found(: .*)?$/;

export function failWith(prefix: string): Fail {
  return (msg: string): never => {
    const text = `executing: ${prefix}${msg}`;
    throw FIELD_NOT_FOUND.test(msg) ? notFound(text) : badRequest(text);
  };
}

export const fail: Fail = failWith('');

/** Largest row or column ID we store exactly (JS numbers). */
export const MAX_ID = BigInt(Number.MAX_SAFE_INTEGER);

export function goType(v: Value): string {
  switch (v.kind) {
    case 'int':
      return 'int64';
    case 'float':
      return 'float64';
    case 'string':
      return 'string';
    case 'bool':
      return 'bool';
    case 'null':
      return '<nil>';
    case 'list':
      return '[]interface {}';
    case 'call':
      return '*pql.Call';
    case 'condition':
      return '*pql.Condition';
  }
}

export function goValue(v: Value): string {
  switch (v.kind) {
    case 'int':
      return v.value.toString();
    case 'float':
      return String(v.value);
    case 'string':
      return v.value;
    case 'bool':
      return String(v.value);
    case 'null':
      return '<nil>';
    case 'list':
      return `[${v.items.map(goValue).join(' ')}]`;
    case 'call':
      return `${v.call.name}()`;
    case 'condition':
      return `${v.op} ${goValue(v.value)}`;
  }
}

/** Pilosa's FieldArg: the first argument that is not reserved (`_…`, from, to). */
export function fieldArg(call: Call): string | undefined {
  for (const k of call.args.keys()) if (!k.startsWith('_') && k !== 'from' && k !== 'to') return k;
  return undefined;
}

/** A non-negative int argument (UintArg); undefined when absent. */
export function uintArg(call: Call, key: string, f: Fail): bigint | undefined {
  const v = call.args.get(key);
  return v === undefined ? undefined : uintValue(v, key, f);
}

export function uintValue(v: Value, key: string, f: Fail): bigint {
  if (v.kind !== 'int') return f(`could not convert ${goValue(v)} of type ${goType(v)} to uint64 in Call.UintArg`);
  if (v.value < 0n) return f(`value for '${key}' must be positive, but got ${v.value}`);
  return v.value;
}

/** A uint argument that must also fit a JS number (counts, limits, IDs). */
export function smallUintArg(call: Call, key: string, f: Fail): number | undefined {
  const v = uintArg(call, key, f);
  return v === undefined ? undefined : toSafe(v, key, f);
}

export function toSafe(v: bigint, what: string, f: Fail): number {
  // Cheaper than comparing bigints, and exact: Number() rounds monotonically and 2^53 is a
  // double, so n exceeds MAX_SAFE_INTEGER exactly when v exceeds MAX_ID.
  const n = Number(v);
  if (n > Number.MAX_SAFE_INTEGER) return f(`${what} value ${v} is larger than the supported maximum ${MAX_ID}`);
  return n;
}

export function intArg(call: Call, key: string, f: Fail): bigint | undefined {
  const v = call.args.get(key);
  if (v === undefined) return undefined;
  if (v.kind !== 'int') return f(`could not convert ${goValue(v)} of type ${goType(v)} to int64 in Call.IntArg`);
  return v.value;
}

export function boolArg(call: Call, key: string, f: Fail, msg: string): boolean | undefined {
  const v = call.args.get(key);
  if (v === undefined) return undefined;
  if (v.kind !== 'bool') return f(msg);
  return v.value;
}

export function stringArg(call: Call, key: string): string | undefined {
  const v = call.args.get(key);
  return v?.kind === 'string' ? v.value : undefined;
}

/**
 * `from`/`to`: a timestamp string or Unix seconds. Go's zero time counts as absent, as in
 * Pilosa (it tests IsZero()).
 */
export function timeArg(call: Call, key: 'from' | 'to', f: Fail): number | undefined {
  const v = call.args.get(key);
  if (v === undefined) return undefined;
  let t: number | undefined;
  if (v.kind === 'string') {
    t = parseTimestamp(v.value);
    if (t === undefined) return f(`parsing ${key} time: invalid date: ${v.value}`);
  } else if (v.kind === 'int') {
    if (!isDateTime(Number(v.value) * 1000))
      return f(
        `parsing ${key} time: ${v.value} seconds is outside the times this server can represent (±8.64e15 ms from 1970, years -271821 to 275760)`,
      );
    t = timeFromUnixSeconds(v.value);
  } else {
    return f(`parsing ${key} time: arg must be a timestamp, got ${goType(v)}`);
  }
  return t === ZERO_TIME ? undefined : t;
}

/** Pilosa's write calls (they never run on the read-only path). */
export const WRITE_CALLS: ReadonlySet<string> = new Set(WRITE_CALL_NAMES);
