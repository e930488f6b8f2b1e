// A log command was written against the schema its coordinator had applied (its metaOffset), but
// a holder applies it against the schema it has applied by then, which may be further on. An index
// or a field deleted and created again under the same name in between is another one: a write sent
// to the old one must not land in the new one (the deletion removed what it wrote, or would have).
// So whatever the holder's timing, a command's calls that name an index or field created by a meta
// command at or after its metaOffset (its incarnation, events/types.ts) change nothing but what a
// deletion leaves behind (the existence of the columns a Set wrote).
import { type ColumnId, shardOf } from '../../domain/shard.js';
import type { EventSink } from '../../events/types.js';
import type { Call, Query, Value } from '../../pql/ast.js';
import { markExists } from '../../service/write-model/bits.js';
import type { ReadonlyHolder, ReadonlyIndex } from '../../state/readonly.js';

/**
 * 'index' when the index itself is newer than the command; else the names of its fields that are
 * (usually none); undefined when nothing is newer or the index does not exist.
 */
export function newerThan(h: ReadonlyHolder, index: string, metaOffset: string): 'index' | Set<string> | undefined {
  const idx = h.index(index);
  if (idx === undefined) return undefined;
  const at = BigInt(metaOffset);
  const newer = (incarnation: string | undefined): boolean => incarnation !== undefined && BigInt(incarnation) >= at;
  if (newer(idx.incarnation)) return 'index';
  let out: Set<string> | undefined;
  for (const f of idx.fields.values()) if (newer(f.incarnation)) (out ??= new Set()).add(f.name);
  return out;
}

/**
 * Whether the query names one of `fields`, as an argument's name or a string argument (a field
 * name appears as either): a reading that may also take a key equal to a field's name for it,
 * which only makes a command that races with that field's re-creation change nothing.
 */
export function namesAny(query: Query, fields: ReadonlySet<string>): boolean {
  const inValue = (v: Value): boolean => {
    switch (v.kind) {
      case 'string':
        return fields.has(v.value);
      case 'list':
        return v.items.some(inValue);
      case 'call':
        return inCall(v.call);
      case 'condition':
        return inValue(v.value);
      default:
        return false;
    }
  };
  const inCall = (c: Call): boolean => {
    for (const [k, v] of c.args) if (fields.has(k) || inValue(v)) return true;
    return c.children.some(inCall);
  };
  return query.calls.some(inCall);
}

/**
 * The one effect a write to a field deleted since keeps: a Set marked its column in the index's
 * existence field, which the deletion did not clear. Marked here for a Set call left out (in
 * Options too), so a holder that applies the command late ends as one that applied it at once.
 */
export function markSetExistence(
  index: ReadonlyIndex,
  call: Call,
  only: ((shard: number) => boolean) | undefined,
  sink: EventSink,
): void {
  if (call.name === 'Options') {
    for (const c of call.children) markSetExistence(index, c, only, sink);
    return;
  }
  if (call.name !== 'Set') return;
  const v = call.args.get('_col');
  let col: ColumnId | undefined;
  if (v?.kind === 'int') col = v.value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v.value) : v.value;
  else if (v?.kind === 'string') col = index.columnKeys.id(v.value);
  if (col !== undefined && (only === undefined || only(shardOf(col)))) markExists(index, col, sink);
}

/** The same for an import left out (not a clear): each of its columns that resolves. */
export function markImportExistence(
  index: ReadonlyIndex,
  req: { columnIds: ArrayLike<number | bigint>; columnKeys: readonly string[] },
  sink: EventSink,
): void {
  for (let i = 0; i < req.columnIds.length; i++) markExists(index, req.columnIds[i], sink);
  for (const key of req.columnKeys) {
    const col = index.columnKeys.id(key);
    if (col !== undefined) markExists(index, col, sink);
  }
}
