// Character classes and fixed-shape tokens of the PQL grammar (docs/API.md §3.1), written as
// code-unit predicates so the scanner never runs a regex: every check is O(1) or a single
// forward pass, so no input can make the parser backtrack or blow up.

/** charCodeAt past the end gives NaN; the scanner uses EOF instead so comparisons stay explicit. */
export const EOF = -1;

export const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

export const isLetter = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);

/** Whitespace between tokens. '\r' is included on purpose: Pilosa rejects CRLF bodies (§8.16). */
export const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/** IDENT = [A-Za-z][A-Za-z0-9]* — call names. */
export const isIdentChar = (c: number): boolean => isLetter(c) || isDigit(c);

/** fieldExpr = [A-Za-z][A-Za-z0-9_-]* — argument keys (after the first letter). */
export const isFieldChar = (c: number): boolean => isIdentChar(c) || c === 0x5f || c === 0x2d;

/** Bare string values: [A-Za-z0-9_:-]+. */
export const isBareChar = (c: number): boolean => isFieldChar(c) || c === 0x3a;

/** End (exclusive) of the run of chars from `i` that satisfy `pred`. */
export function scanWhile(text: string, i: number, pred: (c: number) => boolean): number {
  while (i < text.length && pred(text.charCodeAt(i))) i++;
  return i;
}

// `d` any digit, `M` [01], `D` [0-3]; other chars are literal. Pilosa's TS rule only checks
// these loose classes; calendar validity is the executor's business (`invalid date: …`).
const TS_SHAPE = 'dddd-Md-DdTdd:dd';

/** If a bare timestamp YYYY-MM-DDTHH:MM starts at `i`, its end (exclusive); otherwise -1. */
export function bareTimestampEnd(text: string, i: number): number {
  if (i + TS_SHAPE.length > text.length) return -1;
  for (let k = 0; k < TS_SHAPE.length; k++) {
    const c = text.charCodeAt(i + k);
    const want = TS_SHAPE[k];
    const ok =
      want === 'd'
        ? isDigit(c)
        : want === 'M'
          ? c === 0x30 || c === 0x31
          : want === 'D'
            ? c >= 0x30 && c <= 0x33
            : c === TS_SHAPE.charCodeAt(k);
    if (!ok) return -1;
  }
  return i + TS_SHAPE.length;
}

/**
 * A timestamp bare, in '…' or in "…" (the positional forms of Set and legacy Range accept all
 * three). Returns the timestamp text without quotes and the end offset, or null.
 */
export function timestampAt(text: string, i: number): { value: string; end: number } | null {
  const q = text.charCodeAt(i);
  if (q === 0x22 || q === 0x27) {
    const end = bareTimestampEnd(text, i + 1);
    if (end < 0 || text.charCodeAt(end) !== q) return null;
    return { value: text.slice(i + 1, end), end: end + 1 };
  }
  const end = bareTimestampEnd(text, i);
  return end < 0 ? null : { value: text.slice(i, end), end };
}

/** Human-readable name of the character at `i`, for error messages. */
export function describeAt(text: string, i: number): string {
  if (i >= text.length) return 'end of input';
  const cp = text.codePointAt(i) ?? 0;
  const ch = String.fromCodePoint(cp);
  if (ch === "'") return `"'"`;
  if (cp < 0x20 || cp === 0x7f) return `'${JSON.stringify(ch).slice(1, -1)}'`;
  return `'${ch}'`;
}
