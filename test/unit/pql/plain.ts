// Test helper: a compact, position-free view of the PQL AST so tables of expected results stay
// readable. Positions are checked by their own tests; argument order is kept (objects preserve
// insertion order) and compared via `sameOrder`.
import type { Call, Query, Value } from '../../../src/pql/index.js';

export type PlainValue =
  | bigint
  | string
  | boolean
  | null
  | { float: number }
  | PlainValue[]
  | { call: PlainCall }
  | { op: string; value: PlainValue };

export interface PlainCall {
  name: string;
  args?: Record<string, PlainValue>;
  children?: PlainCall[];
}

export function plainValue(v: Value): PlainValue {
  switch (v.kind) {
    case 'int':
      return v.value;
    case 'float':
      return { float: v.value };
    case 'string':
      return v.value;
    case 'bool':
      return v.value;
    case 'null':
      return null;
    case 'list':
      return v.items.map(plainValue);
    case 'call':
      return { call: plainCall(v.call) };
    case 'condition':
      return { op: v.op, value: plainValue(v.value) };
  }
}

/** Empty args/children are omitted so expectations only spell out what is there. */
export function plainCall(c: Call): PlainCall {
  const out: PlainCall = { name: c.name };
  if (c.args.size > 0) out.args = Object.fromEntries([...c.args].map(([k, v]) => [k, plainValue(v)]));
  if (c.children.length > 0) out.children = c.children.map(plainCall);
  return out;
}

export const plain = (q: Query): PlainCall[] => q.calls.map(plainCall);

/** Order-sensitive serialisation (bigints tagged) to check argument order as well as content. */
export const ordered = (x: unknown): string =>
  JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));

// Shorthands for tables.
export const call = (name: string, args?: Record<string, PlainValue>, children?: PlainCall[]): PlainCall => {
  const out: PlainCall = { name };
  if (args !== undefined && Object.keys(args).length > 0) out.args = args;
  if (children !== undefined && children.length > 0) out.children = children;
  return out;
};
export const f = (float: number): PlainValue => ({ float });
export const cond = (op: string, value: PlainValue): PlainValue => ({ op, value });
export const val = (c: PlainCall): PlainValue => ({ call: c });
