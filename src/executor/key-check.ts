// Pilosa translates every key of a query before running any call (v1.4.0 executor.go
// translateCall), so its key/type errors win over execution errors of earlier calls. This pass
// reproduces those checks over the whole query, with the same texts, before anything else.
// Read-only queries take a shortcut (reads.ts compileReads): compiling Count, the bitmap
// operations and plain Row(f=v) makes the same checks in passing, so checkKeys runs only when
// compiling met anything else, or failed (it then runs first, so its errors keep winning).
import type { Call, Value } from '../pql/ast.js';
import { fail, fieldArg, goType, stringArg } from './args.js';
import { isKeyedField } from './refs.js';
import type { ReadonlyField, ReadonlyIndex } from '../state/readonly.js';

export function checkKeys(index: ReadonlyIndex, calls: readonly Call[]): void {
  for (const c of calls) checkCall(index, c);
}

function checkCall(index: ReadonlyIndex, call: Call): void {
  // Every check reads an argument: calls without any (Count, Intersect, …) only lead to children.
  const hasArgs = call.args.size > 0;
  if (hasArgs) checkOwnArgs(index, call);
  for (const child of call.children) checkCall(index, child);
  if (hasArgs) for (const v of call.args.values()) if (v.kind === 'call') checkCall(index, v.call);
}

function checkOwnArgs(index: ReadonlyIndex, call: Call): void {
  switch (call.name) {
    case 'Set':
    case 'Clear':
    case 'Row':
    case 'Range':
    case 'SetColumnAttrs':
    case 'ClearRow':
    case 'Store': {
      checkCol(index, call.args.get('_col'));
      const f = fieldArg(call);
      if (f !== undefined) checkRow(index, f, call.args.get(f), true);
      break;
    }
    case 'SetRowAttrs': {
      const f = stringArg(call, '_field');
      if (f !== undefined) checkRow(index, f, call.args.get('_row'), false);
      break;
    }
    case 'Rows': {
      checkCol(index, call.args.get('column'));
      const f = stringArg(call, '_field') ?? stringArg(call, 'field');
      if (f !== undefined) checkRow(index, f, call.args.get('previous'), false);
      break;
    }
    case 'GroupBy':
      checkGroupByPrevious(index, call);
      break;
  }
}

function checkCol(index: ReadonlyIndex, v: Value | undefined): void {
  if (v === undefined || v.kind === 'null') return;
  if (index.options.keys && v.kind !== 'string') fail("column value must be a string when index 'keys' option enabled");
  if (!index.options.keys && v.kind === 'string')
    fail("string 'col' value not allowed unless index 'keys' option enabled");
}

/** `boolLiteral`: the value must be true/false on a bool field (Set, Clear, Row, ClearRow, Store). */
function checkRow(index: ReadonlyIndex, fieldName: string, v: Value | undefined, boolLiteral: boolean): void {
  const field = index.field(fieldName);
  // A missing field is reported by the call itself, as Pilosa does.
  if (field === undefined || v === undefined) return;
  checkRowValue(field, v, boolLiteral);
}

/** checkRow once the field is known: compiling a Row() does this itself (see CompileEnv). */
export function checkRowValue(field: ReadonlyField, v: Value, boolLiteral: boolean): void {
  if (field.options.type === 'bool') {
    if (boolLiteral && v.kind !== 'bool') fail(`getting bool key: invalid bool argument type: ${goType(v)}`);
    return;
  }
  if (v.kind === 'null' || field.options.type === 'int') return;
  if (isKeyedField(field) && v.kind !== 'string') fail("row value must be a string when field 'keys' option enabled");
  if (!isKeyedField(field) && v.kind === 'string')
    fail("string 'row' value not allowed unless field 'keys' option enabled");
}

/** GroupBy(…, previous=[…]): one entry per child, keys for keyed fields. */
function checkGroupByPrevious(index: ReadonlyIndex, call: Call): void {
  const prev = call.args.get('previous');
  if (prev === undefined) return;
  if (prev.kind !== 'list') fail(`'previous' argument must be list, but got ${goType(prev)}`);
  if (prev.items.length !== call.children.length) {
    fail(`mismatched lengths for previous: ${prev.items.length} and children: ${call.children.length}`);
  }
  call.children.forEach((child, i) => {
    const name = stringArg(child, '_field') ?? stringArg(child, 'field');
    const field = name === undefined ? undefined : index.field(name);
    if (field === undefined) fail(`field not found: ${name ?? ''}`);
    const v = prev.items[i];
    if (isKeyedField(field) && v.kind !== 'string')
      fail("prev value must be a string when field 'keys' option enabled");
    if (!isKeyedField(field) && v.kind === 'string') {
      fail(`got string row val '${v.value}' in 'previous' for field ${field.name} which doesn't use string keys`);
    }
  });
}
