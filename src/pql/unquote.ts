// Decodes the body of a double-quoted PQL string the way Go's strconv.Unquote does (Pilosa
// unquotes "…" values with it): \a \b \f \n \r \t \v \\ \" \xHH \ooo \uXXXX \UXXXXXXXX.
// Go strings are bytes, so \x and octal escapes are bytes: consecutive byte escapes are decoded
// together as UTF-8 (invalid sequences become U+FFFD, as they would once Go JSON-encodes them).
//
// Two deliberate departures: a raw newline inside the quotes is kept (Go rejects it and Pilosa
// then silently stores ""), and a bad escape is reported instead of yielding "".

export type UnquoteResult = { ok: true; value: string } | { ok: false; offset: number; reason: string };

const SIMPLE: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  '"': '"',
};

const decoder = new TextDecoder('utf-8', { fatal: false });

function digits(body: string, start: number, count: number, radix: number): number {
  if (start + count > body.length) return -1;
  let v = 0;
  for (let k = start; k < start + count; k++) {
    const d = parseInt(body[k], radix);
    if (Number.isNaN(d)) return -1;
    v = v * radix + d;
  }
  return v;
}

const isSurrogate = (v: number): boolean => v >= 0xd800 && v <= 0xdfff;

export function unquoteGo(body: string): UnquoteResult {
  if (!body.includes('\\')) return { ok: true, value: body };
  let out = '';
  let bytes: number[] = [];
  const flush = (): void => {
    if (bytes.length > 0) {
      out += decoder.decode(Uint8Array.from(bytes));
      bytes = [];
    }
  };
  let i = 0;
  while (i < body.length) {
    const next = body.indexOf('\\', i);
    if (next !== i) {
      flush();
      const end = next < 0 ? body.length : next;
      out += body.slice(i, end);
      i = end;
      continue;
    }
    const e = body[i + 1] ?? '';
    const simple = SIMPLE[e];
    if (simple !== undefined) {
      flush();
      out += simple;
      i += 2;
      continue;
    }
    let v: number;
    if (e === 'x') {
      v = digits(body, i + 2, 2, 16);
      if (v < 0) return { ok: false, offset: i, reason: 'invalid \\x escape (want \\xHH)' };
      bytes.push(v);
      i += 4;
    } else if (e >= '0' && e <= '7') {
      v = digits(body, i + 1, 3, 8);
      if (v < 0 || v > 0xff) return { ok: false, offset: i, reason: 'invalid octal escape (want \\000 to \\377)' };
      bytes.push(v);
      i += 4;
    } else if (e === 'u' || e === 'U') {
      const n = e === 'u' ? 4 : 8;
      v = digits(body, i + 2, n, 16);
      if (v < 0 || v > 0x10ffff || isSurrogate(v)) {
        return { ok: false, offset: i, reason: `invalid \\${e} escape (want a valid Unicode code point)` };
      }
      flush();
      out += String.fromCodePoint(v);
      i += 2 + n;
    } else {
      return { ok: false, offset: i, reason: `invalid escape sequence '\\${e}'` };
    }
  }
  flush();
  return { ok: true, value: out };
}
