// JSON text with exact 64-bit integers: bigint values and RawNumber render as bare digits,
// which JSON.stringify cannot do.
import { RawNumber, type JsonOut } from './schema-json.js';

export type Jsonish = JsonOut | bigint | undefined | Jsonish[] | { [k: string]: Jsonish };

export function stringify(v: Jsonish): string {
  if (v === null) return 'null';
  if (v === undefined) return 'null';
  switch (typeof v) {
    case 'bigint':
      return v.toString();
    case 'number':
      // String() is JSON's number form for finite numbers (-0 included), without its call.
      return Number.isFinite(v) ? String(v) : 'null';
    case 'string':
    case 'boolean':
      return JSON.stringify(v);
    default:
      break;
  }
  if (v instanceof RawNumber) return v.text;
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i === 0 ? '' : ',') + stringify(v[i]);
    return out + ']';
  }
  let out = '{';
  let first = true;
  const o = v as { [k: string]: Jsonish };
  for (const k in o) {
    const val = o[k];
    if (val === undefined) continue;
    out += (first ? '' : ',') + quotedKey(k) + ':' + stringify(val);
    first = false;
  }
  return out + '}';
}

/** Object keys repeat in every answer (results, id, count…): quoted once, a bounded memo. */
const keys = new Map<string, string>();

function quotedKey(k: string): string {
  let q = keys.get(k);
  if (q === undefined) {
    q = JSON.stringify(k);
    if (keys.size < 1024) keys.set(k, q);
  }
  return q;
}

/**
 * Parses JSON keeping integers beyond 2^53 exact: they come back as decimal strings, which
 * the option parsers accept wherever an int64 is expected.
 */
export function parseJson(text: string): unknown {
  let out = '';
  let last = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      i++;
      while (i < text.length && text.charCodeAt(i) !== 34) i += text.charCodeAt(i) === 92 ? 2 : 1;
      i++;
      continue;
    }
    if (c === 45 || (c >= 48 && c <= 57)) {
      let j = i + (c === 45 ? 1 : 0);
      while (j < text.length && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++;
      const isInt = j >= text.length || !'.eE'.includes(text[j]);
      if (isInt && j - i > 15) {
        out += text.slice(last, i) + '"' + text.slice(i, j) + '"';
        last = j;
      }
      i = j;
      continue;
    }
    i++;
  }
  return JSON.parse(last === 0 ? text : out + text.slice(last));
}
