// Recursive-descent PQL parser (docs/API.md §3.1 grammar, §3.4 literals, §6.4 legacy all-named
// calls). Pilosa's grammar is a PEG with ordered choice; here every choice is made by a bounded
// lookahead instead of by backtracking, which keeps the parser linear: a special form (Set,
// SetRowAttrs, …) is taken only when the tokens after '(' could not start a generic argument
// list, so the two never compete and no input is parsed twice.

import type { Call, CondOp, Query, Value } from './ast.js';
import {
  EOF,
  bareTimestampEnd,
  describeAt,
  isBareChar,
  isDigit,
  isFieldChar,
  isIdentChar,
  isLetter,
  isSpace,
  scanWhile,
  timestampAt,
} from './chars.js';
import { canonicalCallName } from './call-names.js';
import { PqlParseError } from './parse-error.js';
import { unquoteGo } from './unquote.js';

/** Deepest allowed call nesting; deeper input is a parse error rather than a stack overflow. */
export const MAX_DEPTH = 256;

const RESERVED_KEYS: ReadonlySet<string> = new Set(['_row', '_col', '_start', '_end', '_timestamp', '_field']);

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

const OPEN = 0x28;
const CLOSE = 0x29;
const COMMA = 0x2c;
const LBRACK = 0x5b;
const RBRACK = 0x5d;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const DOT = 0x2e;
const UNDERSCORE = 0x5f;
const EQ = 0x3d;
const LT = 0x3c;
const GT = 0x3e;
const BANG = 0x21;
const ZERO = 0x30;

const KEYWORDS: ReadonlyArray<readonly [string, Value]> = [
  ['null', { kind: 'null' }],
  ['true', { kind: 'bool', value: true }],
  ['false', { kind: 'bool', value: false }],
];

/** Echoed literals are clipped so a megabyte of digits can't become a megabyte of message. */
const clip = (text: string): string => (text.length > 64 ? `${text.slice(0, 64)}…` : text);

const str = (value: string): Value => ({ kind: 'string', value });
const int = (value: bigint): Value => ({ kind: 'int', value });

/** What `arg` parsed; the legacy Range form needs to know the shape of the first two args. */
interface ArgInfo {
  key: string;
  op: CondOp | '=';
  valueStart: number;
  valueEnd: number;
}

export function parse(text: string): Query {
  return new Parser(text).query();
}

class Parser {
  private pos = 0;

  constructor(private readonly text: string) {}

  // Calls <- sp (Call sp)* EOF — top-level calls follow each other with no separator.
  query(): Query {
    const calls: Call[] = [];
    this.skipSpace();
    while (this.pos < this.text.length) {
      calls.push(this.call(1));
      this.skipSpace();
    }
    return { calls };
  }

  private call(depth: number): Call {
    const start = this.pos;
    if (!isLetter(this.peek())) throw this.expected('a call name');
    this.pos = scanWhile(this.text, start + 1, isIdentChar);
    const name = canonicalCallName(this.text.slice(start, this.pos));
    // No space between name and '(' (as in Pilosa): `f=Row (x)` must not read as a call.
    if (this.peek() !== OPEN) throw this.expected(`'(' after '${name}'`);
    if (depth > MAX_DEPTH) throw this.syntax(start, `calls are nested more than ${MAX_DEPTH} deep`);
    this.pos++;
    this.skipSpace();
    const call: Call = { name, args: new Map(), children: [], pos: start };
    switch (name) {
      case 'Set':
      case 'Clear':
      case 'SetColumnAttrs':
        // No generic argument list starts with a column ID (atIdStart leaves `1 < f < 5` alone).
        if (this.atIdStart()) {
          this.setArg(call, '_col', this.pos, this.id('a column ID'));
          this.writeArgs(call, depth, name === 'Set');
          return call;
        }
        break;
      case 'SetRowAttrs': {
        // `SetRowAttrs(f, …`: a bare field then ',' can't start a generic argument.
        const end = this.posFieldEnd(false);
        if (end >= 0) {
          this.setArg(call, '_field', this.pos, str(this.text.slice(this.pos, end)));
          this.pos = end;
          this.comma();
          this.setArg(call, '_row', this.pos, this.id('a row ID'));
          this.writeArgs(call, depth, false);
          return call;
        }
        break;
      }
      case 'TopN':
      case 'Rows': {
        const end = this.posFieldEnd(true);
        if (end >= 0) {
          this.setArg(call, '_field', this.pos, str(this.text.slice(this.pos, end)));
          this.pos = end;
          this.skipSpace();
          if (this.peek() === COMMA) {
            this.pos++;
            this.skipSpace();
            this.allArgs(call, depth, 1);
          } else {
            this.close();
          }
          return call;
        }
        break;
      }
    }
    this.allArgs(call, depth, 0);
    return call;
  }

  /**
   * The tail of Set/Clear/SetColumnAttrs/SetRowAttrs after the positional IDs:
   * `',' arg (',' arg)* (',' timestamp)? ')'` — key args only, at least one, and (like Pilosa)
   * no trailing comma. Positioned just after the last positional ID.
   */
  private writeArgs(call: Call, depth: number, allowTimestamp: boolean): void {
    this.comma();
    for (;;) {
      this.arg(call, depth);
      if (this.closeOrComma(CLOSE, ')')) return;
      const ts = allowTimestamp ? timestampAt(this.text, this.pos) : null;
      if (ts !== null) {
        this.setArg(call, '_timestamp', this.pos, str(ts.value));
        this.pos = ts.end;
        this.skipSpace();
        this.close();
        return;
      }
    }
  }

  /**
   * allargs <- Call (',' Call)* (',' args)? / args / sp, then ','? ')'. `index` is the number of
   * elements already consumed (TopN/Rows' positional field). Positioned at the first element.
   */
  private allArgs(call: Call, depth: number, index: number): void {
    if (this.peek() === CLOSE) {
      this.pos++;
      return;
    }
    if (index === 0 && this.peek() === COMMA) {
      // `Name(,)`: the grammar's empty allargs followed by its optional trailing comma.
      this.pos++;
      this.skipSpace();
      this.close();
      return;
    }
    let keyed = false;
    let firstIsEq = false;
    let fromIsTs = false;
    for (; ; index++) {
      if (call.name === 'Range' && call.children.length === 0 && firstIsEq && this.legacyRange(call, index, fromIsTs)) {
        return;
      }
      const c = this.peek();
      if (isLetter(c) && this.code(scanWhile(this.text, this.pos + 1, isIdentChar)) === OPEN) {
        if (keyed) throw this.syntax(this.pos, 'child calls must come before key=value arguments');
        call.children.push(this.call(depth + 1));
      } else {
        const info = this.arg(call, depth);
        keyed = true;
        if (index === 0) firstIsEq = info.op === '=';
        if (index === 1) {
          fromIsTs =
            info.key === 'from' && info.op === '=' && timestampAt(this.text, info.valueStart)?.end === info.valueEnd;
        }
      }
      if (this.closeOrComma(CLOSE, ')')) return;
      if (this.peek() === CLOSE) {
        this.pos++;
        return;
      }
    }
  }

  /**
   * Legacy `Range(f=1, [from=]TS, [to=]TS)`: positional timestamps become `from`/`to`. Only a
   * bare or quoted timestamp triggers it, and those can't start a generic argument. Returns true
   * when it consumed the rest of the call including ')'.
   */
  private legacyRange(call: Call, index: number, fromIsTs: boolean): boolean {
    const ts = timestampAt(this.text, this.pos);
    if (ts === null) return false;
    if (index === 1) {
      this.setArg(call, 'from', this.pos, str(ts.value));
      this.pos = ts.end;
      this.comma();
      if (this.text.startsWith('to', this.pos)) {
        const eq = this.spaceEnd(this.pos + 2);
        if (this.code(eq) === EQ) this.pos = this.spaceEnd(eq + 1);
      }
      const to = timestampAt(this.text, this.pos);
      if (to === null) throw this.expected('a timestamp (YYYY-MM-DDTHH:MM)');
      this.setArg(call, 'to', this.pos, str(to.value));
      this.pos = to.end;
    } else if (index === 2 && fromIsTs) {
      this.setArg(call, 'to', this.pos, str(ts.value));
      this.pos = ts.end;
    } else {
      return false;
    }
    this.skipSpace();
    this.close();
    return true;
  }

  // arg <- field '=' value / field COND value / condint condLT fieldExpr condLT condint
  private arg(call: Call, depth: number): ArgInfo {
    const start = this.pos;
    const c = this.peek();
    if (c === MINUS || isDigit(c)) return this.between(call);
    if (c === UNDERSCORE) {
      this.pos = scanWhile(this.text, start + 1, isFieldChar);
      const name = this.text.slice(start, this.pos);
      if (!RESERVED_KEYS.has(name)) {
        throw this.syntax(start, `invalid argument name '${name}': names starting with '_' are reserved`);
      }
    } else if (isLetter(c)) {
      this.pos = scanWhile(this.text, start + 1, isFieldChar);
    } else {
      throw this.expected('an argument');
    }
    const key = this.text.slice(start, this.pos);
    this.skipSpace();
    const op = this.operator();
    if (op === null) throw this.expected(`'=' or a comparison operator after '${key}'`);
    this.skipSpace();
    const valueStart = this.pos;
    const value = this.value(depth);
    this.setArg(call, key, start, op === '=' ? value : { kind: 'condition', op, value });
    return { key, op, valueStart, valueEnd: this.pos };
  }

  // Two-char operators first so `<=` is not read as `<` followed by `=`.
  private operator(): CondOp | '=' | null {
    const a = this.peek();
    const b = this.code(this.pos + 1);
    let op: CondOp | '=' | null = null;
    let len = 2;
    if (a === GT && b === LT) op = 'between';
    else if (a === LT && b === EQ) op = '<=';
    else if (a === GT && b === EQ) op = '>=';
    else if (a === EQ && b === EQ) op = '==';
    else if (a === BANG && b === EQ) op = '!=';
    else {
      len = 1;
      if (a === LT) op = '<';
      else if (a === GT) op = '>';
      else if (a === EQ) op = '=';
    }
    if (op !== null) this.pos += len;
    return op;
  }

  /** `a < f < b` / `a <= f <= b` → f: between [a(+1), b(-1)], inclusive as Pilosa stores it. */
  private between(call: Call): ArgInfo {
    const start = this.pos;
    const lo = this.condInt();
    this.skipSpace();
    if (this.peek() !== LT) {
      // Only `a < f < b` may start with a number; say so rather than "expected '<'".
      throw this.syntax(
        start,
        `expected an argument but found ${describeAt(this.text, start)} (only a range condition like 'a < field < b' starts with a number)`,
      );
    }
    const loStrict = this.condLT();
    this.skipSpace();
    const keyPos = this.pos;
    if (!isLetter(this.peek())) throw this.expected('a field name');
    this.pos = scanWhile(this.text, keyPos + 1, isFieldChar);
    const key = this.text.slice(keyPos, this.pos);
    this.skipSpace();
    const hiStrict = this.condLT();
    this.skipSpace();
    const hiPos = this.pos;
    const hi = this.condInt();
    const from = this.checkInt64(loStrict ? lo + 1n : lo, start);
    const to = this.checkInt64(hiStrict ? hi - 1n : hi, hiPos);
    const value: Value = { kind: 'condition', op: 'between', value: { kind: 'list', items: [int(from), int(to)] } };
    this.setArg(call, key, keyPos, value);
    return { key, op: 'between', valueStart: start, valueEnd: this.pos };
  }

  // condint <- '-'? [1-9][0-9]* / '0'
  private condInt(): bigint {
    const start = this.pos;
    if (this.peek() === MINUS) {
      this.pos++;
      if (!isDigit(this.peek()) || this.peek() === ZERO) throw this.expected("a digit 1-9 after '-'");
    } else if (!isDigit(this.peek())) {
      throw this.expected('an integer');
    }
    this.pos = this.peek() === ZERO ? this.pos + 1 : scanWhile(this.text, this.pos, isDigit);
    return this.int64(start, this.pos);
  }

  /** condLT <- '<=' / '<'; returns true for the strict form. */
  private condLT(): boolean {
    if (this.peek() !== LT) throw this.expected("'<' or '<='");
    this.pos++;
    if (this.peek() === EQ) {
      this.pos++;
      return false;
    }
    return true;
  }

  // value <- item / '[' item (',' item)* ']'  — `[]` is also accepted (Pilosa requires an item).
  private value(depth: number): Value {
    if (this.peek() !== LBRACK) return this.item(depth);
    this.pos++;
    this.skipSpace();
    const items: Value[] = [];
    if (this.peek() === RBRACK) {
      this.pos++;
      return { kind: 'list', items };
    }
    for (;;) {
      items.push(this.item(depth));
      if (this.closeOrComma(RBRACK, ']')) return { kind: 'list', items };
    }
  }

  // item, in the PEG's order: keyword, timestamp, number, call, bare word, "…", '…'.
  private item(depth: number): Value {
    const start = this.pos;
    const c = this.peek();
    const kw = this.keyword();
    if (kw !== null) return kw;
    if (isDigit(c)) {
      const end = bareTimestampEnd(this.text, start);
      if (end >= 0) {
        this.pos = end;
        return str(this.text.slice(start, end));
      }
    }
    if (isDigit(c) || c === MINUS || c === DOT) {
      const num = this.number();
      if (num !== null) return num;
    }
    if (isLetter(c) && this.code(scanWhile(this.text, start + 1, isIdentChar)) === OPEN) {
      return { kind: 'call', call: this.call(depth + 1) };
    }
    if (isBareChar(c)) {
      this.pos = scanWhile(this.text, start, isBareChar);
      return str(this.text.slice(start, this.pos));
    }
    if (c === DQUOTE || c === SQUOTE) return str(this.quoted());
    throw this.expected('a value');
  }

  /** null/true/false count only before ',' ')' or ']' (after optional space); else a bare word. */
  private keyword(): Value | null {
    for (const [word, value] of KEYWORDS) {
      if (!this.text.startsWith(word, this.pos)) continue;
      const after = this.pos + word.length;
      const next = this.code(this.spaceEnd(after));
      if (next === COMMA || next === CLOSE || next === RBRACK) {
        this.pos = after;
        return value;
      }
    }
    return null;
  }

  // '-'? [0-9]+ ('.' [0-9]*)? / '-'? '.' [0-9]+ ; null (nothing consumed) if not a number.
  private number(): Value | null {
    const start = this.pos;
    let i = start;
    if (this.code(i) === MINUS) i++;
    let isFloat: boolean;
    if (isDigit(this.code(i))) {
      i = scanWhile(this.text, i, isDigit);
      isFloat = this.code(i) === DOT;
      if (isFloat) i = scanWhile(this.text, i + 1, isDigit);
    } else if (this.code(i) === DOT && isDigit(this.code(i + 1))) {
      i = scanWhile(this.text, i + 1, isDigit);
      isFloat = true;
    } else {
      return null;
    }
    this.pos = i;
    if (!isFloat) return int(this.int64(start, i));
    const text = this.text.slice(start, i);
    const value = Number(text);
    if (!Number.isFinite(value)) throw this.syntax(start, `float is out of range: ${clip(text)}`);
    return { kind: 'float', value };
  }

  // col/row <- uint / 'sq' / "dq"  (uint = [1-9][0-9]* / '0', no sign)
  private id(what: string): Value {
    const start = this.pos;
    const c = this.peek();
    if (isDigit(c)) {
      this.pos = c === ZERO ? start + 1 : scanWhile(this.text, start, isDigit);
      return int(this.int64(start, this.pos));
    }
    if (c === DQUOTE || c === SQUOTE) return str(this.quoted());
    throw this.expected(`${what} (an unsigned integer or a quoted string)`);
  }

  /**
   * A quoted string. Inside, `\<quote>` and `\\` never end it (Pilosa's scanning rule). "…" is
   * unescaped Go-style; '…' is raw: its backslashes stay as written.
   */
  private quoted(): string {
    const start = this.pos;
    const q = this.peek();
    const bodyStart = ++this.pos;
    for (;;) {
      if (this.pos >= this.text.length) throw this.syntax(start, 'unterminated quoted string');
      const c = this.code(this.pos);
      if (c === q) break;
      const n = this.code(this.pos + 1);
      this.pos += c === BACKSLASH && (n === q || n === BACKSLASH) ? 2 : 1;
    }
    const body = this.text.slice(bodyStart, this.pos);
    this.pos++;
    if (q === SQUOTE) return body;
    const r = unquoteGo(body);
    if (!r.ok) throw this.syntax(bodyStart + r.offset, r.reason);
    return r.value;
  }

  private int64(start: number, end: number): bigint {
    const text = this.text.slice(start, end);
    // Refuse absurdly long digit runs before BigInt sees them; 19 digits hold every int64.
    let i = text.charCodeAt(0) === MINUS ? 1 : 0;
    while (i < text.length - 1 && text.charCodeAt(i) === ZERO) i++;
    const v = text.length - i > 19 ? null : BigInt(text);
    if (v === null || v < INT64_MIN || v > INT64_MAX) {
      throw PqlParseError.pilosa(this.text, start, `integer is not in signed 64-bit range: ${clip(text)}`);
    }
    return v;
  }

  /** A between bound after the strict-to-inclusive adjustment can leave int64 (e.g. MAX < f). */
  private checkInt64(v: bigint, pos: number): bigint {
    if (v < INT64_MIN || v > INT64_MAX) {
      throw PqlParseError.pilosa(this.text, pos, `integer is not in signed 64-bit range: ${v}`);
    }
    return v;
  }

  private setArg(call: Call, key: string, keyPos: number, value: Value): void {
    if (call.args.has(key)) throw PqlParseError.pilosa(this.text, keyPos, `duplicate argument provided: ${key}`);
    call.args.set(key, value);
  }

  /**
   * A digit or quote: the start of a positional column ID. A number followed by '<' is instead
   * the range condition `1 < f < 5`, which only the generic form accepts.
   */
  private atIdStart(): boolean {
    const c = this.peek();
    if (c === DQUOTE || c === SQUOTE) return true;
    if (!isDigit(c)) return false;
    return this.code(this.spaceEnd(scanWhile(this.text, this.pos, isDigit))) !== LT;
  }

  /** End of a positional field name at pos if one is followed by ',' (or ')' when allowed), else -1. */
  private posFieldEnd(allowClose: boolean): number {
    if (!isLetter(this.peek())) return -1;
    const end = scanWhile(this.text, this.pos + 1, isFieldChar);
    const next = this.code(this.spaceEnd(end));
    return next === COMMA || (allowClose && next === CLOSE) ? end : -1;
  }

  /** sp, then either `close` (consumed: true) or ',' sp (false): the step between list elements. */
  private closeOrComma(close: number, closeText: string): boolean {
    this.skipSpace();
    if (this.peek() === close) {
      this.pos++;
      return true;
    }
    if (this.peek() !== COMMA) throw this.expected(`',' or '${closeText}'`);
    this.pos++;
    this.skipSpace();
    return false;
  }

  /** sp ',' sp */
  private comma(): void {
    this.skipSpace();
    if (this.peek() !== COMMA) throw this.expected("','");
    this.pos++;
    this.skipSpace();
  }

  private close(): void {
    if (this.peek() !== CLOSE) throw this.expected("')'");
    this.pos++;
  }

  private skipSpace(): void {
    this.pos = scanWhile(this.text, this.pos, isSpace);
  }

  private spaceEnd(i: number): number {
    return scanWhile(this.text, i, isSpace);
  }

  private peek(): number {
    return this.code(this.pos);
  }

  private code(i: number): number {
    return i < this.text.length ? this.text.charCodeAt(i) : EOF;
  }

  private expected(what: string): PqlParseError {
    return this.syntax(this.pos, `expected ${what} but found ${describeAt(this.text, this.pos)}`);
  }

  private syntax(pos: number, detail: string): PqlParseError {
    return PqlParseError.syntax(this.text, pos, detail);
  }
}
