// Write calls → WritePlan, fully validated against the schema before anything is decided, so a
// bad write anywhere in a request leaves nothing applied. Texts follow Pilosa (v1.4.0
// executor.go executeSet/executeClearBit/…), prefixed `executing: `.
import type { AttrPatch, AttrValue } from '../../domain/types.js';
import { parseTimestamp } from '../../domain/time-quantum.js';
import type { Call, Value } from '../../pql/ast.js';
import { inverseEnabled } from '../legacy/legacy-meta.js';
import {
  type BitmapPlan,
  type CompileEnv,
  type OptionSettings,
  type ColRef,
  type Ref,
  WRITE_CALLS,
  colRef,
  compileBitmap,
  compileOptions,
  fail,
  fieldArg,
  goType,
  goValue,
  rowRef,
} from '../../executor/index.js';
import { fieldAsOf } from '../../state/field-as-of.js';
import type { ReadonlyField } from '../../state/readonly.js';

export type WritePlan =
  | { kind: 'set'; field: ReadonlyField; col: ColRef; row: Ref; timestamp?: number }
  | { kind: 'setValue'; field: ReadonlyField; col: ColRef; value: bigint }
  | { kind: 'clear'; field: ReadonlyField; col: ColRef; row: Ref }
  | { kind: 'clearRow'; field: ReadonlyField; row: Ref }
  | { kind: 'store'; field: ReadonlyField; row: Ref; child: BitmapPlan }
  | { kind: 'rowAttrs'; field: ReadonlyField; row: Ref; attrs: AttrPatch }
  | { kind: 'columnAttrs'; col: Ref; attrs: AttrPatch }
  | { kind: 'options'; settings: OptionSettings; child: WritePlan };

/** Whether a top-level call writes (directly or as the child of Options). */
export function isWriteCall(call: Call): boolean {
  if (WRITE_CALLS.has(call.name)) return true;
  return call.name === 'Options' && call.children.length === 1 && isWriteCall(call.children[0]);
}

export function compileWrite(env: CompileEnv, call: Call): WritePlan {
  const { index } = env;
  switch (call.name) {
    case 'Set':
      return compileSet(env, call);
    case 'Clear': {
      const field = requireField(env, fieldArg(call), 'Clear() argument required: field');
      const row = rowRef(field, call.args.get(field.name) as Value, field.name, (m) =>
        fail(`reading Clear() row: ${m}`),
      );
      const c = call.args.get('_col') ?? fail('column argument to Clear(<COLUMN>, <FIELD>=<ROW>) required');
      return { kind: 'clear', field, row, col: colRef(index, c, '_col', (m) => fail(`reading Clear() column: ${m}`)) };
    }
    case 'ClearRow': {
      const field = requireField(env, fieldArg(call), 'ClearRow() argument required: field');
      if (field.options.type === 'int') fail('ClearRow() is not supported on int field types');
      return {
        kind: 'clearRow',
        field,
        row: rowRef(field, call.args.get(field.name) as Value, field.name, (m) => fail(`reading ClearRow() row: ${m}`)),
      };
    }
    case 'Store': {
      const field = requireField(env, fieldArg(call), 'field required for Store()');
      if (field.options.type !== 'set') fail(`can't Store() on a ${field.options.type} field`);
      const row = rowRef(field, call.args.get(field.name) as Value, field.name, (m) =>
        fail(`reading Store() row: ${m}`),
      );
      if (call.children.length !== 1) fail('Store() requires a source row');
      return { kind: 'store', field, row, child: compileBitmap(env, call.children[0], fail, 'Store') };
    }
    case 'SetRowAttrs': {
      const name = call.args.get('_field');
      const field = requireField(env, name?.kind === 'string' ? name.value : undefined, 'SetRowAttrs() field required');
      const r = call.args.get('_row') ?? fail("SetRowAttrs() row field 'row' required");
      const row = rowRef(field, r, '_row', (m) => fail(`reading SetRowAttrs() row: ${m}`));
      return { kind: 'rowAttrs', field, row, attrs: attrPatch(call, ['_field', '_row']) };
    }
    case 'SetColumnAttrs': {
      const c = call.args.get('_col') ?? fail('reading SetColumnAttrs() col errs: <nil> found false');
      const col = colRef(index, c, '_col', (m) => fail(`reading SetColumnAttrs() col errs: ${m} found true`));
      // Attributes are kept by column IDs up to 2^53 − 1 (the log stores them as doubles).
      if (typeof col === 'bigint')
        fail(`SetColumnAttrs() column ${col} is larger than the maximum for attributes, ${Number.MAX_SAFE_INTEGER}`);
      return { kind: 'columnAttrs', col, attrs: attrPatch(call, ['_col', 'field']) };
    }
    case 'Options':
      return { kind: 'options', settings: compileOptions(call), child: compileWrite(env, call.children[0]) };
    default:
      return fail(`unknown call: ${call.name}`);
  }
}

function compileSet(env: CompileEnv, call: Call): WritePlan {
  const { index } = env;
  const c = call.args.get('_col') ?? fail("Set() column argument 'col' required");
  const col = colRef(index, c, '_col', (m) => fail(`reading Set() column: ${m}`));
  const field = requireField(env, fieldArg(call), 'Set() argument required: field');
  const v = call.args.get(field.name) as Value;
  if (field.options.type === 'int') {
    if (v.kind !== 'int')
      return fail(`reading Set() row: could not convert ${goValue(v)} of type ${goType(v)} to int64 in Call.IntArg`);
    if (v.value < field.options.min || v.value > field.options.max) {
      fail(
        `Set() value ${v.value} for int field ${field.name} is out of range: allowed ${field.options.min} to ${field.options.max}`,
      );
    }
    return { kind: 'setValue', field, col, value: v.value };
  }
  const row = rowRef(field, v, field.name, (m) => fail(`reading Set() row: ${m}`));
  // A 0.x inverse view numbers rows by column: its rows stop at 2^53 − 1 as every row does.
  if (typeof col === 'bigint' && inverseEnabled(index, field.name))
    fail(
      `Set() column ${col} of inverse-enabled frame ${field.name} is larger than the maximum ${Number.MAX_SAFE_INTEGER}`,
    );
  const ts = call.args.get('_timestamp');
  let timestamp: number | undefined;
  if (ts !== undefined) {
    timestamp = ts.kind === 'string' ? parseTimestamp(ts.value) : undefined;
    if (timestamp === undefined) fail(`invalid date: ${ts.kind === 'string' ? ts.value : ts.kind}`);
  }
  return { kind: 'set', field, col, row, timestamp };
}

/** The field as the command saw it (cluster mode: its options as of the command's metaOffset). */
function requireField(env: CompileEnv, name: string | undefined, missing: string): ReadonlyField {
  if (name === undefined) return fail(missing);
  const field = env.index.field(name) ?? fail(`field not found: ${name}`);
  return fieldAsOf(field, env.metaOffset);
}

/** The call's non-reserved arguments as an attribute update (null deletes a key). */
function attrPatch(call: Call, reserved: readonly string[]): AttrPatch {
  const patch: AttrPatch = {};
  for (const [k, v] of call.args) {
    if (reserved.includes(k)) continue;
    patch[k] = attrValue(k, v);
  }
  return patch;
}

function attrValue(k: string, v: Value): AttrValue | null {
  switch (v.kind) {
    case 'int':
    case 'float':
    case 'string':
    case 'bool':
      return v.value;
    case 'null':
      return null;
    default:
      return fail(
        `invalid value for attribute '${k}': attribute values must be strings, integers, floats, booleans or null`,
      );
  }
}
