// Invalid PQL → PqlParseError at the right place. Syntax errors name the position in the message;
// the two errors Pilosa reports with fixed text (duplicate argument, int64 range) keep that text
// exactly, and carry the position only on the error object.
import { describe, expect, it } from 'vitest';
import { MAX_DEPTH, parse, PqlParseError } from '../../../src/pql/index.js';

/** [query, line, column, detail]: detail is the text after `parse error at line L, column C: `. */
type SyntaxRow = readonly [query: string, line: number, column: number, detail: string];

const syntaxCases: SyntaxRow[] = [
  // structure
  ['Row(f=1', 1, 8, "expected ',' or ')' but found end of input"],
  ['Count(Row(f=1)', 1, 15, "expected ',' or ')' but found end of input"],
  ['Count(', 1, 7, 'expected an argument but found end of input'],
  ['Row(f=1,,)', 1, 9, "expected an argument but found ','"],
  ['Row(f=1),Row(f=2)', 1, 9, "expected a call name but found ','"],
  ['Row(f=1)\t)', 1, 10, "expected a call name but found ')'"],
  ['Row (f=1)', 1, 4, "expected '(' after 'Row' but found ' '"],
  ['(f=1)', 1, 1, "expected a call name but found '('"],
  ['Row(f=1)x', 1, 10, "expected '(' after 'x' but found end of input"],
  ['\u0001', 1, 1, "expected a call name but found '\\u0001'"],
  ['Row(f=1 g=2)', 1, 9, "expected ',' or ')' but found 'g'"],
  ['Row(f)', 1, 6, "expected '=' or a comparison operator after 'f' but found ')'"],
  ['Row(f!1)', 1, 6, "expected '=' or a comparison operator after 'f' but found '!'"],
  ['Row(my_call(x=1))', 1, 12, "expected '=' or a comparison operator after 'my_call' but found '('"],
  ['Row("k"=1)', 1, 5, `expected an argument but found '"'`],
  ['Row(_foo=1)', 1, 5, "invalid argument name '_foo': names starting with '_' are reserved"],
  ['Union(Row(f=1), x=1, Row(f=2))', 1, 22, 'child calls must come before key=value arguments'],
  ['Row(f=1, Row(g=1))', 1, 10, 'child calls must come before key=value arguments'],
  ['Row(f=Row (g=1))', 1, 11, "expected ',' or ')' but found '('"],
  // values
  ['Row(f==)', 1, 8, "expected a value but found ')'"],
  ['Row(f=%)', 1, 7, "expected a value but found '%'"],
  ['Row(f=>1)', 1, 7, "expected a value but found '>'"],
  ['Row(f=😀)', 1, 7, "expected a value but found '😀'"],
  ['Row(f=true', 1, 11, "expected ',' or ')' but found end of input"],
  ['Row(f=12abc)', 1, 9, "expected ',' or ')' but found 'a'"],
  ['Row(f=2017-01-01)', 1, 11, "expected ',' or ')' but found '-'"],
  ['Row(f=1.5.5)', 1, 10, "expected ',' or ')' but found '.'"],
  ['Row(f=1e5)', 1, 8, "expected ',' or ')' but found 'e'"],
  ['Row(f=[1,[2]])', 1, 10, "expected a value but found '['"],
  ['Row(f=[1,2)', 1, 11, "expected ',' or ']' but found ')'"],
  ['Row(f=[1 2])', 1, 10, "expected ',' or ']' but found '2'"],
  ['Row(f=[,])', 1, 8, "expected a value but found ','"],
  [`Row(f=${'9'.repeat(400)}.5)`, 1, 7, `float is out of range: ${'9'.repeat(64)}…`],
  // quoted strings
  ['Row(f="abc)', 1, 7, 'unterminated quoted string'],
  ["Row(f='abc)", 1, 7, 'unterminated quoted string'],
  ['Row(f="a\\")', 1, 7, 'unterminated quoted string'],
  ['Row(f="\\q")', 1, 8, "invalid escape sequence '\\q'"],
  ['Row(f="ok\\\'")', 1, 10, "invalid escape sequence '\\''"],
  ['Row(f="\\uD800")', 1, 8, 'invalid \\u escape (want a valid Unicode code point)'],
  ['Row(f="\\U00110000")', 1, 8, 'invalid \\U escape (want a valid Unicode code point)'],
  ['Row(f="\\x4")', 1, 8, 'invalid \\x escape (want \\xHH)'],
  ['Row(f="\\400")', 1, 8, 'invalid octal escape (want \\000 to \\377)'],
  // conditions
  [
    'Row(f=1, 2)',
    1,
    10,
    "expected an argument but found '2' (only a range condition like 'a < field < b' starts with a number)",
  ],
  [
    'Row(1=1)',
    1,
    5,
    "expected an argument but found '1' (only a range condition like 'a < field < b' starts with a number)",
  ],
  [
    'Row(01 < f < 3)',
    1,
    5,
    "expected an argument but found '0' (only a range condition like 'a < field < b' starts with a number)",
  ],
  ['Row(-0 < f < 5)', 1, 6, "expected a digit 1-9 after '-' but found '0'"],
  ['Row(1 < f)', 1, 10, "expected '<' or '<=' but found ')'"],
  ['Row(1 < f > 3)', 1, 11, "expected '<' or '<=' but found '>'"],
  ['Row(1 < 2 < 3)', 1, 9, "expected a field name but found '2'"],
  // positional forms
  ['Set(1)', 1, 6, "expected ',' but found ')'"],
  ['Set(1,)', 1, 7, "expected an argument but found ')'"],
  ['Set(1, f=1,)', 1, 12, "expected an argument but found ')'"],
  ['Set(01, f=1)', 1, 6, "expected ',' but found '1'"],
  [
    'Set(-1, f=1)',
    1,
    5,
    "expected an argument but found '-' (only a range condition like 'a < field < b' starts with a number)",
  ],
  ['Set(1, f=1, 2017-01-01T00:00, g=1)', 1, 29, "expected ')' but found ','"],
  ['Set(1, f=1, 2017-01-01T00:00 x)', 1, 30, "expected ')' but found 'x'"],
  ['Set("a)', 1, 5, 'unterminated quoted string'],
  ['SetRowAttrs(f, x, a=1)', 1, 16, "expected a row ID (an unsigned integer or a quoted string) but found 'x'"],
  ['SetRowAttrs(f, 1)', 1, 17, "expected ',' but found ')'"],
  ['SetColumnAttrs(1)', 1, 17, "expected ',' but found ')'"],
  ['Clear(1, Row(f=1))', 1, 13, "expected '=' or a comparison operator after 'Row' but found '('"],
  // positional forms are for the exact, case-sensitive names only
  [
    'set(1, f=1)',
    1,
    5,
    "expected an argument but found '1' (only a range condition like 'a < field < b' starts with a number)",
  ],
  [
    'SetBit(1, f=1)',
    1,
    8,
    "expected an argument but found '1' (only a range condition like 'a < field < b' starts with a number)",
  ],
  ['topn(f)', 1, 7, "expected '=' or a comparison operator after 'f' but found ')'"],
  ['TopN(f, , n=1)', 1, 9, "expected an argument but found ','"],
  ['Rows(f g)', 1, 8, "expected '=' or a comparison operator after 'f' but found 'g'"],
  ['Range(f=1, 2017-01-01T00:00)', 1, 28, "expected ',' but found ')'"],
  ['Range(f=1, 2017-01-01T00:00, x)', 1, 30, "expected a timestamp (YYYY-MM-DDTHH:MM) but found 'x'"],
  ['Range(f=1, 2017-01-01T00:00, 2017-02-01T00:00,)', 1, 46, "expected ')' but found ','"],
  // multi-line positions (CRLF: '\r' belongs to the previous line)
  ['Row(f=1)\n\nRow(f=1 g)', 3, 9, "expected ',' or ')' but found 'g'"],
  ['Row(f=1)\r\nRow(f=)', 2, 7, "expected a value but found ')'"],
  ['Union(\r\n  Row(f=1),\r\n  Row(f=2)\r\n', 4, 1, "expected ',' or ')' but found end of input"],
  ['Row(f=1)\n  Row(f="x\\z")', 2, 11, "invalid escape sequence '\\z'"],
];

/** [query, line, column, exact message] for Pilosa's fixed-text errors. */
const pilosaCases: ReadonlyArray<readonly [string, number, number, string]> = [
  ['Row(f=1, f=2)', 1, 10, 'duplicate argument provided: f'],
  ['Row(f=1, f>2)', 1, 10, 'duplicate argument provided: f'],
  ['Row(f=1, 1 < f < 3)', 1, 14, 'duplicate argument provided: f'],
  ['Set(1, f=1, f=2)', 1, 13, 'duplicate argument provided: f'],
  ['Set(1, _col=2)', 1, 8, 'duplicate argument provided: _col'],
  ['Set(1, f=1, _timestamp=2, 2017-01-01T00:00)', 1, 27, 'duplicate argument provided: _timestamp'],
  ['TopN(f, _field=g)', 1, 9, 'duplicate argument provided: _field'],
  ['Range(from=1, 2017-01-01T00:00, 2017-02-01T00:00)', 1, 15, 'duplicate argument provided: from'],
  ['Row(f=1)\nRow(\n  g=1,\n  g=2)', 4, 3, 'duplicate argument provided: g'],
  ['Row(f=9223372036854775808)', 1, 7, 'integer is not in signed 64-bit range: 9223372036854775808'],
  ['Row(f=-9223372036854775809)', 1, 7, 'integer is not in signed 64-bit range: -9223372036854775809'],
  ['Row(f=[1, 18446744073709551616])', 1, 11, 'integer is not in signed 64-bit range: 18446744073709551616'],
  ['Set(99999999999999999999, f=1)', 1, 5, 'integer is not in signed 64-bit range: 99999999999999999999'],
  ['SetRowAttrs(f, 9223372036854775808, a=1)', 1, 16, 'integer is not in signed 64-bit range: 9223372036854775808'],
  ['Row(f > 9223372036854775808)', 1, 9, 'integer is not in signed 64-bit range: 9223372036854775808'],
  // strict bounds are made inclusive, which can step outside int64
  ['Row(9223372036854775807 < f < 10)', 1, 5, 'integer is not in signed 64-bit range: 9223372036854775808'],
  ['Row(1 < f < -9223372036854775808)', 1, 13, 'integer is not in signed 64-bit range: -9223372036854775809'],
  [`Row(f=${'1'.repeat(100)})`, 1, 7, `integer is not in signed 64-bit range: ${'1'.repeat(64)}…`],
];

function parseError(query: string): PqlParseError {
  try {
    parse(query);
  } catch (e) {
    if (e instanceof PqlParseError) return e;
    throw e;
  }
  throw new Error(`expected a parse error for ${JSON.stringify(query)}`);
}

describe('parse: syntax errors name their position', () => {
  it.each(syntaxCases)('%j → %i:%i', (query, line, column, detail) => {
    const err = parseError(query);
    expect(err.message).toBe(`parse error at line ${line}, column ${column}: ${detail}`);
    expect([err.line, err.column]).toEqual([line, column]);
    const lines = query.split('\n');
    const expectedPos = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0) + column - 1;
    expect(err.pos).toBe(expectedPos);
    expect(err.name).toBe('PqlParseError');
    expect(err).toBeInstanceOf(Error);
  });
});

describe("parse: Pilosa's fixed-text errors", () => {
  it.each(pilosaCases)('%j', (query, line, column, message) => {
    const err = parseError(query);
    expect(err.message).toBe(message);
    expect([err.line, err.column]).toEqual([line, column]);
  });
});

describe('parse: nesting depth is capped', () => {
  const nested = (depth: number): string => 'Count('.repeat(depth - 1) + 'Row(f=1)' + ')'.repeat(depth - 1);

  it(`accepts ${MAX_DEPTH} levels`, () => {
    let c = parse(nested(MAX_DEPTH)).calls[0];
    let depth = 1;
    while (c.children.length > 0) {
      c = c.children[0];
      depth++;
    }
    expect(depth).toBe(MAX_DEPTH);
  });

  it(`rejects ${MAX_DEPTH + 1} levels at the offending call`, () => {
    const err = parseError(nested(MAX_DEPTH + 1));
    expect(err.pos).toBe(6 * MAX_DEPTH);
    expect(err.message).toBe(
      `parse error at line 1, column ${6 * MAX_DEPTH + 1}: calls are nested more than ${MAX_DEPTH} deep`,
    );
  });

  it('counts calls used as values and list items too', () => {
    const deep = 'X(v='.repeat(MAX_DEPTH) + 'Row(f=1)' + ')'.repeat(MAX_DEPTH);
    expect(parseError(deep).message).toContain('nested more than');
    const deepList = 'X(v=['.repeat(MAX_DEPTH) + 'Row(f=1)' + '])'.repeat(MAX_DEPTH);
    expect(parseError(deepList).message).toContain('nested more than');
  });

  it('a very deep input fails fast instead of overflowing the stack', () => {
    const err = parseError('Count('.repeat(1_000_000));
    expect(err.message).toContain('nested more than');
  });
});
