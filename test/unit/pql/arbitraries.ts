// fast-check generators of valid PQL: each yields the query as tokens (so tests can put random
// whitespace between them) together with the AST it must parse to, in plain.ts form.
import fc from 'fast-check';
import { call, type PlainCall, type PlainValue } from './plain.js';

export interface Gen<T> {
  tokens: string[];
  expected: T;
}
interface ArgGen extends Gen<PlainValue> {
  key: string;
}

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
const RESERVED = ['_row', '_col', '_start', '_end', '_timestamp', '_field'] as const;
const SPECIAL = [
  'Set',
  'Clear',
  'SetColumnAttrs',
  'SetRowAttrs',
  'ClearRow',
  'Store',
  'TopN',
  'Rows',
  'Range',
] as const;

/** Whitespace that may separate any two tokens (CRLF included). */
export const gapArb = fc.array(fc.constantFrom('', '', ' ', '\t', '\n', '\r\n', ' \r\n\t '), { maxLength: 8 });

export function render(tokens: readonly string[], gaps: readonly string[]): string {
  const gap = (i: number): string => (gaps.length === 0 ? '' : gaps[i % gaps.length]);
  let out = gap(0);
  tokens.forEach((t, i) => {
    out += (i > 0 ? gap(i) : '') + t;
  });
  return out + gap(tokens.length);
}

/** tokens of each element, separated by `sep`. */
const joinTokens = (elems: readonly string[][], sep: string): string[] =>
  elems.flatMap((e, i) => (i === 0 ? e : [sep, ...e]));

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

/** Go-style "…" quoting; `escapeAll` also escapes every non-printable-ASCII code point. */
function goQuote(s: string, escapeAll: boolean): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (escapeAll && (cp < 0x20 || cp > 0x7e)) out += cp > 0xffff ? `\\U${hex(cp, 8)}` : `\\u${hex(cp, 4)}`;
    else out += ch;
  }
  return `${out}"`;
}

const one = (token: string, expected: PlainValue): Gen<PlainValue> => ({ tokens: [token], expected });

const intArb = fc.bigInt({ min: INT64_MIN, max: INT64_MAX }).map((v) => one(v.toString(), v));
const floatArb = fc
  .tuple(fc.constantFrom('', '-'), fc.stringMatching(/^[0-9]{1,8}$/), fc.stringMatching(/^[0-9]{0,8}$/), fc.boolean())
  .map(([sign, a, b, dropInt]) => {
    const text = dropInt && b.length > 0 ? `${sign}.${b}` : `${sign}${a}.${b}`;
    return one(text, { float: Number(text) });
  });
const KEYWORD_TEXT = ['null', 'true', 'false'];
const bareArb = fc
  .stringMatching(/^[A-Za-z_:][A-Za-z0-9_:-]{0,8}$/)
  .filter((s) => !KEYWORD_TEXT.includes(s))
  .map((s) => one(s, s));
const dqArb = fc
  .tuple(fc.string({ unit: 'binary', maxLength: 10 }), fc.boolean())
  .map(([s, escapeAll]) => one(goQuote(s, escapeAll), s));
const sqArb = fc
  .string({ unit: 'binary', maxLength: 10 })
  .filter((s) => !s.includes("'") && !s.includes('\\'))
  .map((s) => one(`'${s}'`, s));
const keywordArb = fc.constantFrom(one('true', true), one('false', false), one('null', null));
const tsText = fc.stringMatching(/^[0-9]{4}-[01][0-9]-[0-3][0-9]T[0-9]{2}:[0-9]{2}$/);
const tsArb = tsText.map((s) => one(s, s));
/** A timestamp in one of the three spellings the positional forms accept. */
const tsPositional = fc
  .tuple(tsText, fc.constantFrom('', "'", '"'))
  .map(([s, q]) => ({ token: `${q}${s}${q}`, value: s }));
const idArb = fc.oneof(
  fc.bigInt({ min: 0n, max: INT64_MAX }).map((v) => one(v.toString(), v)),
  dqArb,
  sqArb,
);

const fieldKey = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,6}$/);
const anyKey = fc.oneof({ arbitrary: fieldKey, weight: 4 }, { arbitrary: fc.constantFrom(...RESERVED), weight: 1 });

interface Level {
  call: fc.Arbitrary<Gen<PlainCall>>;
  arg: fc.Arbitrary<ArgGen>;
}
const levels = new Map<number, Level>();

/** Generators whose calls nest at most `depth` more levels (memoised per depth). */
export function level(depth: number): Level {
  const known = levels.get(depth);
  if (known !== undefined) return known;
  const items: fc.Arbitrary<Gen<PlainValue>>[] = [intArb, floatArb, bareArb, dqArb, sqArb, keywordArb, tsArb];
  if (depth > 0) {
    items.push(level(depth - 1).call.map((c) => ({ tokens: c.tokens, expected: { call: c.expected } })));
  }
  const item = fc.oneof(...items);
  const list = fc.array(item, { maxLength: 4 }).map((xs) => ({
    tokens: [
      '[',
      ...joinTokens(
        xs.map((x) => x.tokens),
        ',',
      ),
      ']',
    ],
    expected: xs.map((x) => x.expected),
  }));
  const value = fc.oneof({ arbitrary: item, weight: 3 }, { arbitrary: list, weight: 1 });

  const eqArg = fc
    .tuple(anyKey, value)
    .map(([key, v]): ArgGen => ({ key, tokens: [key, '=', ...v.tokens], expected: v.expected }));
  const condArg = fc
    .tuple(anyKey, fc.constantFrom('==', '!=', '<', '<=', '>', '>='), value)
    .map(([key, op, v]): ArgGen => ({ key, tokens: [key, op, ...v.tokens], expected: { op, value: v.expected } }));
  const btwnArg = fc
    .tuple(anyKey, list)
    .map(
      ([key, v]): ArgGen => ({ key, tokens: [key, '><', ...v.tokens], expected: { op: 'between', value: v.expected } }),
    );
  const rangeArg = fc
    .tuple(
      fieldKey,
      fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
      fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
      fc.boolean(),
      fc.boolean(),
    )
    .filter(([, lo, hi, sLo, sHi]) => !(sLo && lo === INT64_MAX) && !(sHi && hi === INT64_MIN))
    .map(
      ([key, lo, hi, sLo, sHi]): ArgGen => ({
        key,
        tokens: [lo.toString(), sLo ? '<' : '<=', key, sHi ? '<' : '<=', hi.toString()],
        expected: { op: 'between', value: [sLo ? lo + 1n : lo, sHi ? hi - 1n : hi] },
      }),
    );
  const arg = fc.oneof(
    { arbitrary: eqArg, weight: 5 },
    { arbitrary: condArg, weight: 2 },
    { arbitrary: btwnArg, weight: 1 },
    { arbitrary: rangeArg, weight: 1 },
  );
  const args = (exclude: readonly string[], minLength: number): fc.Arbitrary<ArgGen[]> =>
    fc.uniqueArray(
      arg.filter((a) => !exclude.includes(a.key)),
      { selector: (a) => a.key, minLength, maxLength: 4 },
    );
  const argObject = (as: readonly ArgGen[]): Record<string, PlainValue> =>
    Object.fromEntries(as.map((a) => [a.key, a.expected]));

  const children: fc.Arbitrary<Gen<PlainCall>[]> =
    depth > 0 ? fc.array(level(depth - 1).call, { maxLength: 3 }) : fc.constant([]);
  const name = fc.oneof(fc.stringMatching(/^[A-Za-z][A-Za-z0-9]{0,6}$/), fc.constantFrom(...SPECIAL));

  // Name(children…, k=v…[,]) — every name, the special ones included, takes this form.
  const generic = fc.tuple(name, children, args([], 0), fc.boolean()).map(([n, cs, as, trailing]) => ({
    tokens: [
      `${n}(`,
      ...joinTokens([...cs.map((c) => c.tokens), ...as.map((a) => a.tokens)], ','),
      ...(trailing ? [','] : []),
      ')',
    ],
    expected: call(
      n,
      argObject(as),
      cs.map((c) => c.expected),
    ),
  }));
  const setLike = fc
    .tuple(
      fc.constantFrom('Set', 'Clear', 'SetColumnAttrs'),
      idArb,
      args(['_col', '_timestamp'], 1),
      fc.option(tsPositional),
    )
    .map(([n, id, as, ts]) => {
      const withTs = n === 'Set' && ts !== null;
      return {
        tokens: [
          `${n}(`,
          ...id.tokens,
          ',',
          ...joinTokens(
            as.map((a) => a.tokens),
            ',',
          ),
          ...(withTs ? [',', ts.token] : []),
          ')',
        ],
        expected: call(n, { _col: id.expected, ...argObject(as), ...(withTs ? { _timestamp: ts.value } : {}) }),
      };
    });
  const setRowAttrs = fc.tuple(fieldKey, idArb, args(['_field', '_row'], 1)).map(([field, id, as]) => ({
    tokens: [
      'SetRowAttrs(',
      field,
      ',',
      ...id.tokens,
      ',',
      ...joinTokens(
        as.map((a) => a.tokens),
        ',',
      ),
      ')',
    ],
    expected: call('SetRowAttrs', { _field: field, _row: id.expected, ...argObject(as) }),
  }));
  const topNRows = fc
    .tuple(fc.constantFrom('TopN', 'Rows'), fieldKey, children, args(['_field'], 0), fc.boolean())
    .map(([n, field, cs, as, trailing]) => ({
      tokens: [
        `${n}(`,
        ...joinTokens([[field], ...cs.map((c) => c.tokens), ...as.map((a) => a.tokens)], ','),
        ...(trailing ? [','] : []),
        ')',
      ],
      expected: call(
        n,
        { _field: field, ...argObject(as) },
        cs.map((c) => c.expected),
      ),
    }));
  const legacyRange = fc
    .tuple(
      anyKey.filter((k) => k !== 'from' && k !== 'to'),
      value,
      tsPositional,
      tsPositional,
      fc.boolean(),
      fc.boolean(),
    )
    .map(([key, v, from, to, fromKey, toKey]) => ({
      tokens: [
        'Range(',
        key,
        '=',
        ...v.tokens,
        ',',
        ...(fromKey ? ['from', '='] : []),
        from.token,
        ',',
        ...(toKey ? ['to', '='] : []),
        to.token,
        ')',
      ],
      expected: call('Range', { [key]: v.expected, from: from.value, to: to.value }),
    }));
  const result: Level = {
    call: fc.oneof(
      { arbitrary: generic, weight: 4 },
      { arbitrary: setLike, weight: 1 },
      { arbitrary: setRowAttrs, weight: 1 },
      { arbitrary: topNRows, weight: 1 },
      { arbitrary: legacyRange, weight: 1 },
    ),
    arg,
  };
  levels.set(depth, result);
  return result;
}

/** A whole query: top-level calls with no separator between them. */
export const queryArb = (depth: number): fc.Arbitrary<Gen<PlainCall[]>> =>
  fc.array(level(depth).call, { maxLength: 4 }).map((cs) => ({
    tokens: cs.flatMap((c) => c.tokens),
    expected: cs.map((c) => c.expected),
  }));
