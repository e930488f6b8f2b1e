// Legacy PQL (Pilosa 0.5–0.10, docs/API.md §6.4) rewritten into current calls before execution, so
// one executor serves both generations. Pure syntax: what a frame's labels and int fields are
// called comes in through LegacyNames (the service reads them from state).
//
// Mapping (frame defaults to `general`):
//   Bitmap(frame=f, row|rowID|id|<rowLabel>=5)                  → Row(f=5)
//   SetBit(frame=f, row=1, col|columnID|<columnLabel>=2[, timestamp=TS]) → Set(2, f=1[, TS])
//   ClearBit(…)                                                  → Clear(2, f=1)
//   SetFieldValue(frame=f, col=1, x=10)                          → Set(1, <int field of f.x>=10)
//   Range(frame=f, row=1, start=TS, end=TS)                      → Row(f=1, from=TS, to=TS)
//   Range(frame=f, x > 10)                                       → Row(<int field of f.x> > 10)
//   Sum|Min|Max(R, frame=f, field=x)                             → Sum(R, field=<int field of f.x>)
//   TopN(R, frame=f, n=…, field=a, filters=[…], …)               → TopN(f, R, n=…, attrName=a, attrValues=[…], …)
//   SetRowAttrs(frame=f, row=1, k=v)                             → SetRowAttrs(f, 1, k=v)
//   SetColumnAttrs(col=2, k=v)                                   → SetColumnAttrs(2, k=v)
// Every other call is kept, with its children and call-valued arguments rewritten. Current calls
// are never changed: a call counts as legacy only by its name or by legacy-only arguments.
import type { Call, Query, Value } from './ast.js';

export interface LegacyNames {
  /** The frame's row label (0.5–0.8 `rowLabel`; default `rowID`). `row`, `rowID`, `id` always work too. */
  rowLabel(frame: string): string;
  /** The index's column label (0.5 `columnLabel`; default `columnID`). `col`, `columnID` always work too. */
  columnLabel(): string;
  /** The current field holding int field `name` of frame `frame`. */
  intField(frame: string, name: string): string;
  /** Whether the frame keeps an inverse view (0.x inverseEnabled). */
  inverseEnabled(frame: string): boolean;
}

/** Row(f=c, _inverse=true): the row of column c in f's inverse view (its rows as columns). */
export const INVERSE_ARG = '_inverse';

/** A legacy call that cannot be mapped (missing or unknown argument, unsupported inverse view). */
export class LegacyQueryError extends Error {
  override name = 'LegacyQueryError';
}

export const DEFAULT_FRAME = 'general';
export const DEFAULT_ROW_LABEL = 'rowID';
export const DEFAULT_COLUMN_LABEL = 'columnID';

const LEGACY_NAMES: ReadonlySet<string> = new Set(['Bitmap', 'SetBit', 'ClearBit', 'SetFieldValue']);

/** True when the query uses any legacy form (the JSON answer then names row columns `bits`). */
export function hasLegacyCall(query: Query): boolean {
  return query.calls.some(isLegacyTree);
}

export function rewriteLegacy(query: Query, names: LegacyNames): Query {
  if (!hasLegacyCall(query)) return query;
  return { calls: query.calls.map((c) => rewriteCall(c, names)) };
}

function isLegacyTree(call: Call): boolean {
  if (isLegacy(call)) return true;
  if (call.children.some(isLegacyTree)) return true;
  for (const v of call.args.values()) if (v.kind === 'call' && isLegacyTree(v.call)) return true;
  return false;
}

function isLegacy(call: Call): boolean {
  if (LEGACY_NAMES.has(call.name)) return true;
  const frame = call.args.get('frame');
  // A string frame name: a current field named `frame` would hold a row ID (an int) instead.
  const named = frame !== undefined && frame.kind === 'string';
  switch (call.name) {
    case 'Range':
      return named || call.args.has('start') || call.args.has('end');
    case 'Sum':
    case 'Min':
    case 'Max':
      return named;
    case 'TopN':
      return !call.args.has('_field');
    case 'SetRowAttrs':
      return !call.args.has('_field');
    case 'SetColumnAttrs':
      return !call.args.has('_col');
    default:
      return false;
  }
}

function rewriteCall(call: Call, names: LegacyNames): Call {
  const c: Call = {
    ...call,
    children: call.children.map((ch) => rewriteCall(ch, names)),
    args: rewriteArgValues(call.args, names),
  };
  if (!isLegacy(call)) return c;
  const a = new ArgReader(c);
  switch (c.name) {
    case 'Bitmap':
      return bitmap(a, names);
    case 'SetBit':
    case 'ClearBit':
      return setBit(a, names);
    case 'SetFieldValue':
      return setFieldValue(a, names);
    case 'Range':
      return range(a, names);
    case 'Sum':
    case 'Min':
    case 'Max':
      return aggregate(a, names);
    case 'TopN':
      return topN(a, names);
    case 'SetRowAttrs':
      return setRowAttrs(a, names);
    case 'SetColumnAttrs':
      return setColumnAttrs(a, names);
    default:
      return c;
  }
}

function rewriteArgValues(args: Map<string, Value>, names: LegacyNames): Map<string, Value> {
  const out = new Map<string, Value>();
  for (const [k, v] of args) out.set(k, v.kind === 'call' ? { kind: 'call', call: rewriteCall(v.call, names) } : v);
  return out;
}

/** Bitmap(frame=f, row=5) → Row(f=5). */
function bitmap(a: ArgReader, names: LegacyNames): Call {
  const frame = a.frame();
  const row = a.row(frame, names);
  if (row === undefined) {
    const column = a.column(names);
    if (column !== undefined) {
      if (!names.inverseEnabled(frame))
        throw new LegacyQueryError(
          `Bitmap(): frame ${frame} has no inverse view (create it with "inverseEnabled": true) to query by column`,
        );
      a.noChildren();
      a.done();
      return a.make('Row', [
        [frame, column],
        [INVERSE_ARG, { kind: 'bool', value: true }],
      ]);
    }
    throw new LegacyQueryError(`Bitmap() requires a row argument (row, rowID or ${names.rowLabel(frame)})`);
  }
  a.noChildren();
  a.done();
  return a.make('Row', [[frame, row]]);
}

/** SetBit/ClearBit(frame=f, row=1, col=2[, timestamp=TS]) → Set/Clear(2, f=1[, TS]). */
function setBit(a: ArgReader, names: LegacyNames): Call {
  const name = a.call.name;
  const frame = a.frame();
  const row = a.row(frame, names);
  const col = a.column(names);
  if (row === undefined)
    throw new LegacyQueryError(`${name}() requires a row argument (row, rowID or ${names.rowLabel(frame)})`);
  if (col === undefined)
    throw new LegacyQueryError(`${name}() requires a column argument (col, columnID or ${names.columnLabel()})`);
  const ts = name === 'SetBit' ? a.take('timestamp') : undefined;
  a.noChildren();
  a.done();
  const args: [string, Value][] = [
    ['_col', col],
    [frame, row],
  ];
  if (ts !== undefined) args.push(['_timestamp', ts]);
  return a.make(name === 'SetBit' ? 'Set' : 'Clear', args);
}

/** SetFieldValue(frame=f, col=1, x=10) → Set(1, <f.x>=10). */
function setFieldValue(a: ArgReader, names: LegacyNames): Call {
  const frame = a.frame();
  const col = a.column(names);
  if (col === undefined)
    throw new LegacyQueryError(`SetFieldValue() requires a column argument (col, columnID or ${names.columnLabel()})`);
  a.noChildren();
  const rest = a.rest();
  if (rest.length !== 1)
    throw new LegacyQueryError(
      `SetFieldValue() takes exactly one field=value argument here, got ${rest.length}; send one SetFieldValue per field`,
    );
  const [field, value] = rest[0];
  if (value.kind !== 'int') throw new LegacyQueryError(`SetFieldValue(): value of ${field} must be an integer`);
  return a.make('Set', [
    ['_col', col],
    [names.intField(frame, field), value],
  ]);
}

/** Range: the time form → Row(f=1, from, to); the condition form → Row(<f.x> > 10). */
function range(a: ArgReader, names: LegacyNames): Call {
  const frame = a.frame();
  a.noChildren();
  const row = a.row(frame, names);
  if (row !== undefined) {
    const args: [string, Value][] = [[frame, row]];
    const start = a.take('start') ?? a.take('from');
    const end = a.take('end') ?? a.take('to');
    if (start !== undefined) args.push(['from', start]);
    if (end !== undefined) args.push(['to', end]);
    a.done();
    return a.make('Row', args);
  }
  if (a.column(names) !== undefined) throw inverse('Range');
  const rest = a.rest();
  if (rest.length !== 1 || rest[0][1].kind !== 'condition') {
    throw new LegacyQueryError(
      'Range() needs a row argument with start/end, or exactly one field condition such as x > 10',
    );
  }
  return a.make('Row', [[names.intField(frame, rest[0][0]), rest[0][1]]]);
}

/** Sum/Min/Max(R, frame=f, field=x) → Sum(R, field=<f.x>). */
function aggregate(a: ArgReader, names: LegacyNames): Call {
  const frame = a.frame();
  const field = a.take('field');
  a.done();
  if (field === undefined) return a.make(a.call.name, []);
  if (field.kind !== 'string') throw new LegacyQueryError(`${a.call.name}(): field must be a field name`);
  return a.make(a.call.name, [['field', { kind: 'string', value: names.intField(frame, field.value) }]]);
}

/** TopN(R, frame=f, n, ids, field=attr, filters=[…], threshold, tanimotoThreshold) → TopN(f, R, …). */
function topN(a: ArgReader, names: LegacyNames): Call {
  const frame = a.frame();
  const inv = a.take('inverse');
  const args: [string, Value][] = [['_field', { kind: 'string', value: frame }]];
  if (inv !== undefined && !(inv.kind === 'bool' && !inv.value)) {
    if (inv.kind !== 'bool' || !names.inverseEnabled(frame)) throw inverse('TopN', frame);
    args.push([INVERSE_ARG, inv]);
  }
  for (const [k, v] of a.rest()) {
    if (k === 'field') args.push(['attrName', v]);
    else if (k === 'filters') args.push(['attrValues', v]);
    else args.push([k, v]);
  }
  return a.make('TopN', args);
}

/** SetRowAttrs(frame=f, row=1, k=v) → SetRowAttrs(f, 1, k=v). */
function setRowAttrs(a: ArgReader, names: LegacyNames): Call {
  const frame = a.frame();
  const row = a.row(frame, names);
  if (row === undefined)
    throw new LegacyQueryError(`SetRowAttrs() requires a row argument (row, rowID or ${names.rowLabel(frame)})`);
  a.noChildren();
  return a.make('SetRowAttrs', [['_field', { kind: 'string', value: frame }], ['_row', row], ...a.rest()]);
}

/** SetColumnAttrs(col=2, k=v) → SetColumnAttrs(2, k=v); a `frame` argument is dropped (attrs are per index). */
function setColumnAttrs(a: ArgReader, names: LegacyNames): Call {
  const col = a.column(names);
  if (col === undefined)
    throw new LegacyQueryError(`SetColumnAttrs() requires a column argument (col, columnID or ${names.columnLabel()})`);
  a.take('frame');
  a.noChildren();
  return a.make('SetColumnAttrs', [['_col', col], ...a.rest()]);
}

function inverse(call: string, frame?: string): LegacyQueryError {
  if (frame !== undefined)
    return new LegacyQueryError(
      `${call}(): frame ${frame} has no inverse view (create it with "inverseEnabled": true)`,
    );
  return new LegacyQueryError(`${call}(): inverse views (inverseEnabled frames) are not supported here; query by row`);
}

/** Takes arguments off a call one by one; what is left is either an error or passed through. */
class ArgReader {
  private readonly left: Map<string, Value>;

  constructor(readonly call: Call) {
    this.left = new Map(call.args);
  }

  take(key: string): Value | undefined {
    const v = this.left.get(key);
    this.left.delete(key);
    return v;
  }

  frame(): string {
    const v = this.take('frame');
    if (v === undefined) return DEFAULT_FRAME;
    if (v.kind !== 'string') throw new LegacyQueryError(`${this.call.name}(): frame must be a frame name`);
    return v.value;
  }

  row(frame: string, names: LegacyNames): Value | undefined {
    return this.oneOf(['row', 'rowID', 'id', names.rowLabel(frame)], 'row');
  }

  column(names: LegacyNames): Value | undefined {
    return this.oneOf(['col', 'columnID', names.columnLabel()], 'column');
  }

  private oneOf(keys: string[], what: string): Value | undefined {
    const present = [...new Set(keys)].filter((k) => this.left.has(k));
    if (present.length > 1)
      throw new LegacyQueryError(`${this.call.name}(): several ${what} arguments: ${present.join(', ')}`);
    return present.length === 1 ? this.take(present[0]) : undefined;
  }

  rest(): [string, Value][] {
    const out = [...this.left];
    this.left.clear();
    return out;
  }

  noChildren(): void {
    if (this.call.children.length > 0) throw new LegacyQueryError(`${this.call.name}() takes no child calls`);
  }

  done(): void {
    const extra = [...this.left.keys()];
    if (extra.length > 0)
      throw new LegacyQueryError(
        `${this.call.name}(): unknown argument${extra.length > 1 ? 's' : ''} ${extra.join(', ')}`,
      );
  }

  make(name: string, args: [string, Value][]): Call {
    return { name, args: new Map(args), children: this.call.children, pos: this.call.pos };
  }
}
