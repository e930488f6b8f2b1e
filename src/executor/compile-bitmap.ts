// Bitmap calls → BitmapPlan (Row, Range, Union, Intersect, Difference, Xor, Not, Shift), with
// Pilosa's error texts. `f` carries the prefix of the calling context ("map reduce: " at top
// level, "finding top results: " under TopN, …).
import { addDays, ZERO_TIME } from '../domain/time-quantum.js';
import type { Call, Value } from '../pql/ast.js';
import { INVERSE_VIEW } from '../domain/names.js';
import { INVERSE_ARG } from '../pql/legacy.js';
import { BITMAP_CALL_NAMES, OTHER_READ_CALL_NAMES, WRITE_CALL_NAMES } from '../pql/call-names.js';
import type { BsiPredicate } from '../state/bsi.js';
import { type Fail, MAX_ID, fieldArg, intArg, timeArg } from './args.js';
import type { QueryClock } from './clock.js';
import type { BitmapPlan, Ref } from './plan.js';
import { checkRowValue } from './key-check.js';
import { rowRef } from './refs.js';
import { fieldAsOf } from '../state/field-as-of.js';
import type { ReadonlyField, ReadonlyIndex } from '../state/readonly.js';

export interface CompileEnv {
  index: ReadonlyIndex;
  clock: QueryClock;
  /**
   * Still true while every call compiled so far had its key checks (key-check.ts) made by the
   * compiler itself; a call it leaves to checkKeys turns it false (see compileReads).
   */
  keysChecked: boolean;
  /** Cluster mode: the meta offset a log command was sent at (QueryOptions.metaOffset). */
  metaOffset?: string;
}

/** A field of the index as the query sees it (a log command: its options as of metaOffset). */
export function envField(env: CompileEnv, name: string): ReadonlyField | undefined {
  const field = env.index.field(name);
  return field === undefined ? undefined : fieldAsOf(field, env.metaOffset);
}

/** `parent` names the call that takes this one as its input, for the error text. */
export function compileBitmap(env: CompileEnv, call: Call, f: Fail, parent = ''): BitmapPlan {
  // compileRow checks its own argument's key; any other argument is left to checkKeys.
  if (call.args.size > 0 && call.name !== 'Row' && call.name !== 'Range') env.keysChecked = false;
  switch (call.name) {
    case 'Row':
    case 'Range':
      return compileRow(env, call, f);
    case 'Union':
      return { kind: 'union', children: kids(env, call, f) };
    case 'Xor':
      return { kind: 'xor', children: kids(env, call, f) };
    case 'Intersect':
      if (call.children.length === 0) f('empty Intersect query is currently not supported');
      return { kind: 'intersect', children: kids(env, call, f) };
    case 'Difference':
      if (call.children.length === 0) f('empty Difference query is currently not supported');
      return { kind: 'difference', children: kids(env, call, f) };
    case 'Not':
      if (call.children.length === 0) f('Not() requires an input row');
      if (call.children.length > 1) f('Not() only accepts a single row input');
      if (env.index.existence === undefined) f(`index does not support existence tracking: ${env.index.name}`);
      return { kind: 'not', child: compileBitmap(env, call.children[0], f, 'Not') };
    case 'Shift': {
      const n = intArg(call, 'n', (m) => f(`executeShiftShard: ${m}`)) ?? 0n;
      if (call.children.length === 0) f('Shift() requires an input row');
      if (call.children.length > 1) f('Shift() only accepts a single row input');
      if (n < 0n) f('cannot shift by negative values');
      const child = compileBitmap(env, call.children[0], f, 'Shift');
      // Columns past 2^53 cannot exist here: a larger shift leaves nothing.
      return n > MAX_ID ? { kind: 'empty' } : { kind: 'shift', child, n: Number(n) };
    }
    default:
      return f(notBitmapCall(call.name, parent));
  }
}

const BITMAP_CALLS = `${BITMAP_CALL_NAMES.slice(0, -1).join(', ')} or ${BITMAP_CALL_NAMES[BITMAP_CALL_NAMES.length - 1]}`;

const OTHER_CALLS: ReadonlySet<string> = new Set([...OTHER_READ_CALL_NAMES, ...WRITE_CALL_NAMES]);

/** A call that exists but is no bitmap call, given as an input, gets a text naming where. */
function notBitmapCall(name: string, parent: string): string {
  if (parent === '' || !OTHER_CALLS.has(name)) return `unknown call: ${name}`;
  return `${name}() does not return a bitmap and cannot be the input of ${parent}(): expected a bitmap call (${BITMAP_CALLS})`;
}

function kids(env: CompileEnv, call: Call, f: Fail): BitmapPlan[] {
  const out: BitmapPlan[] = new Array<BitmapPlan>(call.children.length);
  for (let i = 0; i < out.length; i++) out[i] = compileBitmap(env, call.children[i], f, call.name);
  return out;
}

/** Whether a call is a Row/Range with a condition (BSI) argument. */
export function hasCondition(call: Call): boolean {
  for (const v of call.args.values()) if (v.kind === 'condition') return true;
  return false;
}

function compileRow(env: CompileEnv, call: Call, f: Fail): BitmapPlan {
  if (hasCondition(call)) return compileCondition(env, call, f);
  const name = fieldArg(call);
  if (name === undefined) return f('Row() argument required: field');
  const field = envField(env, name);
  if (field === undefined) return f(`field not found: ${name}`);
  const v = call.args.get(name) as Value;
  // checkKeys on Row(f=v): nothing but checkRowValue. More arguments (_col, from, to): left to it.
  if (call.args.size === 1) checkRowValue(field, v, true);
  else env.keysChecked = false;
  const row: Ref = rowRef(field, v, name, f, 'Row() error with arg for row: ');
  // Row(f=1): with the field as its only argument, there is no from/to to look up.
  if (call.name === 'Row' && call.args.size === 1) return { kind: 'row', field, row };
  const from = timeArg(call, 'from', f);
  const to = timeArg(call, 'to', f);
  if (call.name === 'Row' && from === undefined && to === undefined) {
    // Only the legacy rewrite writes _inverse (Bitmap(frame, columnID) of an inverseEnabled frame).
    return call.args.has(INVERSE_ARG) ? { kind: 'row', field, row, view: INVERSE_VIEW } : { kind: 'row', field, row };
  }
  // A field without a quantum (every non-time field) has no time views: nothing matches.
  if (field.options.timeQuantum === '') return { kind: 'empty' };
  return { kind: 'timeRow', field, row, from: from ?? ZERO_TIME, to: to ?? addDays(env.clock.now(), 1) };
}

function compileCondition(env: CompileEnv, call: Call, f: Fail): BitmapPlan {
  env.keysChecked = false;
  if (call.args.size > 1) return f('Row(): too many arguments');
  const [name, arg] = [...call.args][0];
  if (arg.kind !== 'condition') return f(`Row(): "${name}": expected condition argument`);
  const field = envField(env, name);
  if (field === undefined) return f(`field not found: ${name}`);
  if (field.options.type !== 'int') return f('bsigroup not found');
  return { kind: 'bsi', field, pred: predicate(arg.op, arg.value, f) };
}

function predicate(op: '==' | '!=' | '<' | '<=' | '>' | '>=' | 'between', v: Value, f: Fail): BsiPredicate {
  if (op === '!=' && v.kind === 'null') return { op: 'notNull' };
  if (op === 'between') {
    if (v.kind !== 'list' || v.items.length !== 2 || v.items.some((i) => i.kind !== 'int')) {
      return f('Row(): BETWEEN condition requires exactly two integer values');
    }
    const [lo, hi] = v.items.map((i) => (i.kind === 'int' ? i.value : 0n));
    return { op: 'between', lo, hi };
  }
  if (v.kind !== 'int') return f('Row(): conditions only support integer values');
  return { op, value: v.value };
}
