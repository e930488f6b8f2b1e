// A parsed PQL query as JSON, for POST /internal/cluster/partial. The coordinator sends the
// query it validated (after any 0.x rewrite), not its text: a holder then runs exactly the same
// calls without parsing or rewriting again. Integers travel as decimal strings (64-bit), floats
// as their shortest decimal text (so -0, Infinity and NaN survive).
import { badRequest } from '../../domain/errors.js';
import type { Call, CondOp, Query, Value } from '../../pql/ast.js';

export type WireValue =
  | { k: 'i'; v: string }
  | { k: 'f'; v: string }
  | { k: 's'; v: string }
  | { k: 'b'; v: boolean }
  | { k: 'n' }
  | { k: 'l'; v: WireValue[] }
  | { k: 'c'; v: WireCall }
  | { k: 'cond'; op: CondOp; v: WireValue };

export interface WireCall {
  name: string;
  args: [string, WireValue][];
  children: WireCall[];
  pos: number;
}

export function encodeQuery(q: Query): WireCall[] {
  return q.calls.map(encodeCall);
}

function encodeCall(c: Call): WireCall {
  return {
    name: c.name,
    args: [...c.args].map(([k, v]): [string, WireValue] => [k, encodeValue(v)]),
    children: c.children.map(encodeCall),
    pos: c.pos,
  };
}

function encodeValue(v: Value): WireValue {
  switch (v.kind) {
    case 'int':
      return { k: 'i', v: v.value.toString() };
    case 'float':
      return { k: 'f', v: Object.is(v.value, -0) ? '-0' : String(v.value) };
    case 'string':
      return { k: 's', v: v.value };
    case 'bool':
      return { k: 'b', v: v.value };
    case 'null':
      return { k: 'n' };
    case 'list':
      return { k: 'l', v: v.items.map(encodeValue) };
    case 'call':
      return { k: 'c', v: encodeCall(v.call) };
    case 'condition':
      return { k: 'cond', op: v.op, v: encodeValue(v.value) };
  }
}

const OPS: readonly string[] = ['==', '!=', '<', '<=', '>', '>=', 'between'];

/** The query of a partial request; a malformed one is a 400 (a peer on another version). */
export function decodeQuery(v: unknown): Query {
  if (!Array.isArray(v)) throw bad('query: expected a list of calls');
  return { calls: v.map(decodeCall) };
}

function decodeCall(v: unknown): Call {
  const o = obj(v, 'call');
  if (typeof o.name !== 'string' || !Array.isArray(o.args) || !Array.isArray(o.children) || typeof o.pos !== 'number')
    throw bad('query: malformed call');
  const args = new Map<string, Value>();
  for (const a of o.args) {
    if (!Array.isArray(a) || a.length !== 2 || typeof a[0] !== 'string') throw bad('query: malformed argument');
    args.set(a[0], decodeValue(a[1]));
  }
  return { name: o.name, args, children: o.children.map(decodeCall), pos: o.pos };
}

function decodeValue(v: unknown): Value {
  const o = obj(v, 'value');
  switch (o.k) {
    case 'i':
      if (typeof o.v !== 'string' || !/^-?\d+$/.test(o.v)) throw bad('query: malformed integer');
      return { kind: 'int', value: BigInt(o.v) };
    case 'f':
      if (typeof o.v !== 'string') throw bad('query: malformed float');
      return { kind: 'float', value: Number(o.v) };
    case 's':
      if (typeof o.v !== 'string') throw bad('query: malformed string');
      return { kind: 'string', value: o.v };
    case 'b':
      if (typeof o.v !== 'boolean') throw bad('query: malformed bool');
      return { kind: 'bool', value: o.v };
    case 'n':
      return { kind: 'null' };
    case 'l':
      if (!Array.isArray(o.v)) throw bad('query: malformed list');
      return { kind: 'list', items: o.v.map(decodeValue) };
    case 'c':
      return { kind: 'call', call: decodeCall(o.v) };
    case 'cond':
      if (typeof o.op !== 'string' || !OPS.includes(o.op)) throw bad('query: malformed condition');
      return { kind: 'condition', op: o.op as CondOp, value: decodeValue(o.v) };
    default:
      throw bad('query: unknown value kind');
  }
}

function obj(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(`query: expected a ${what}`);
  return v as Record<string, unknown>;
}

const bad = (m: string) => badRequest(`cluster partial: ${m}`);
