// JSON text with exact 64-bit integers: bigint values and RawNumber render as bare digits,
// which JSON.stringify cannot do.
import { RawNumber, type JsonOut } from './schema-json.js';

export type Jsonish = JsonOut | bigint | undefined | Jsonish[] | { [k: string]: Jsonish };

export function stringify(v: Jsonish): string {
  if (v === null) return 'null';
  if (v === undefined) return 'null';
  if (v instanceof RawNumber) return v.text;
  switch (typeof v) {
    case 'bigint':
      return v.toString();
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : 'null';
    case 'string':
    case 'boolean':
      return JSON.stringify(v);
    default:
      break;
  }
  if (Array.isArray(v)) return '[' + v.map(stringify).join(',') + ']';
  let out = '{';
  let first = true;
  for (const [k, val] of Object.entries(v as { [k: string]: Jsonish })) {
    if (val === undefined) continue;
    out += (first ? '' : ',') + JSON.stringify(k) + ':' + stringify(val);
    first = false;
  }
  return out + '}';
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
