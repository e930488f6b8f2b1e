// Property tests: generated valid queries parse to the AST they were built from (with any
// whitespace between tokens), and random or mutated text either parses or throws PqlParseError
// with a consistent position — never another exception, never a hang.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse, PqlParseError } from '../../../src/pql/index.js';
import { gapArb, queryArb, render } from './arbitraries.js';
import { ordered, plain } from './plain.js';

/** Parses; any failure must be a well-formed PqlParseError (anything else fails the property). */
function parseOrError(text: string): void {
  try {
    parse(text);
  } catch (e) {
    if (!(e instanceof PqlParseError)) throw e;
    expect(e.pos).toBeGreaterThanOrEqual(0);
    expect(e.pos).toBeLessThanOrEqual(text.length);
    const before = text.slice(0, e.pos);
    const line = before.split('\n').length;
    expect(e.line).toBe(line);
    expect(e.column).toBe(e.pos - (before.lastIndexOf('\n') + 1) + 1);
    expect(e.message.length).toBeGreaterThan(0);
  }
}

const ALPHABET = [
  'Row',
  'Set',
  'Clear',
  'SetRowAttrs',
  'SetColumnAttrs',
  'TopN',
  'Rows',
  'Range',
  'Store',
  'Count',
  'f',
  '_row',
  '_x',
  '(',
  ')',
  ',',
  '=',
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '><',
  '[',
  ']',
  '"',
  "'",
  '\\',
  '\\u',
  '\\x',
  '\\U0010FFFF',
  '0',
  '1',
  '-',
  '.',
  '9223372036854775808',
  '-9223372036854775808',
  'true',
  'false',
  'null',
  '2017-01-01T00:00',
  'from=',
  'to=',
  ' ',
  '\t',
  '\n',
  '\r',
  '\r\n',
  ':',
  '_',
  'é',
  '😀',
  '\u0000',
  '\ud800',
];

type Mutation = readonly [at: number, kind: 'delete' | 'insert' | 'replace' | 'dup' | 'cut', piece: string];

function mutate(text: string, mutations: readonly Mutation[]): string {
  let s = text;
  for (const [at, kind, piece] of mutations) {
    const i = s.length === 0 ? 0 : at % (s.length + 1);
    if (kind === 'delete') s = s.slice(0, i) + s.slice(i + 1);
    else if (kind === 'insert') s = s.slice(0, i) + piece + s.slice(i);
    else if (kind === 'replace') s = s.slice(0, i) + piece + s.slice(i + 1);
    else if (kind === 'dup') s = s.slice(0, i) + s.slice(i, i + 8) + s.slice(i);
    else s = s.slice(0, i);
  }
  return s;
}

const mutationArb = fc.array(
  fc.tuple(fc.nat(), fc.constantFrom('delete', 'insert', 'replace', 'dup', 'cut'), fc.constantFrom(...ALPHABET)),
  { minLength: 1, maxLength: 4 },
);

describe('parse: properties', () => {
  it('generated valid queries round-trip to their AST, whatever the whitespace', () => {
    fc.assert(
      fc.property(queryArb(3), gapArb, (q, gaps) => {
        const got = plain(parse(render(q.tokens, gaps)));
        expect(got).toEqual(q.expected);
        expect(ordered(got)).toBe(ordered(q.expected));
      }),
      { numRuns: 2000 },
    );
  });

  it('mutated valid queries parse or throw PqlParseError', () => {
    fc.assert(
      fc.property(queryArb(2), gapArb, mutationArb, (q, gaps, ms) => {
        parseOrError(mutate(render(q.tokens, gaps), ms));
      }),
      { numRuns: 4000 },
    );
  });

  it('random token soup parses or throws PqlParseError', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...ALPHABET), { maxLength: 60 }), (parts) => {
        parseOrError(parts.join(''));
      }),
      { numRuns: 5000 },
    );
  });

  it('random unicode text parses or throws PqlParseError', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        parseOrError(text);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'Rw(),=<>![]"\'\\-.019_ \n\r:T'.split('')), maxLength: 120 }),
        (text) => {
          parseOrError(text);
        },
      ),
      { numRuns: 5000 },
    );
  });
});

describe('parse: large inputs stay linear', () => {
  // Budgets are loose (CI machines vary); a quadratic or backtracking parser misses them by far.
  const timed = (text: string): number => {
    const t0 = performance.now();
    parseOrError(text);
    return performance.now() - t0;
  };

  it.each([
    ['100k top-level calls', Array.from({ length: 100_000 }, (_, i) => `Set(${i}, f=1)`).join('')],
    ['one call with 50k args', `Row(${Array.from({ length: 50_000 }, (_, i) => `k${i}="v${i}"`).join(', ')})`],
    ['a list of 200k items', `Row(f=[${Array.from({ length: 200_000 }, (_, i) => i).join(',')}])`],
    ['a 2 MB string', `Row(f="${'ab\\n'.repeat(700_000)}")`],
    ['a 1 MB unterminated string', `Row(f="${'x'.repeat(1_000_000)}`],
    ['1 MB of whitespace before a keyword', `Row(f=true${' '.repeat(1_000_000)})`],
    ['1 MB of whitespace, then garbage', `Row(f=true${' '.repeat(1_000_000)}x`],
    ['a 1 MB bare word', `Row(f=${'a'.repeat(1_000_000)})`],
    ['a 1 MB digit run', `Row(f=${'9'.repeat(1_000_000)})`],
    ['a 1 MB float', `Row(f=1.${'5'.repeat(1_000_000)})`],
    ['1M open parens', '('.repeat(1_000_000)],
    ['1M open brackets', `Row(f=${'['.repeat(1_000_000)}`],
    ['deep nesting attempt', 'Union('.repeat(500_000)],
    ['500k newlines then an error', `${'\n'.repeat(500_000)}Row(f=)`],
  ])('%s', (_name, text) => {
    expect(timed(text)).toBeLessThan(3000);
  });
});
