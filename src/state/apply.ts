// apply(): the only function that changes state. Used by live writes, crash recovery, snapshot
// replay, point-in-time restore and replicas alike. No clock, no I/O, no validation: every event
// was decided against the state it is applied to, so a mismatch is a broken invariant.
import { EXISTS_FIELD, STANDARD_VIEW, bsiViewName } from '../domain/names.js';
import { defaultFieldOptions } from '../domain/types.js';
import { assert } from '../util/assert.js';
import type { Event, EventOf, EventType } from '../events/types.js';
import { bitDepthFor, clearValues, setValues } from './bsi.js';
import { Field } from './field.js';
import { type Holder, commandMarkKey } from './holder.js';
import { Index } from './index-state.js';
import { fragmentLayout } from './view.js';

type Appliers = { readonly [K in EventType]: (holder: Holder, event: EventOf<K>) => void };

export function apply(holder: Holder, event: Event): void {
  (APPLY[event.type] as (holder: Holder, event: Event) => void)(holder, event);
}

/** One entry per event type: the type says none is missing (events/registry.ts has the rest). */
const APPLY: Appliers = {
  IndexCreated(holder, event) {
    assert(!holder.indexes.has(event.index), `apply: index ${event.index} exists`);
    const index = new Index(event.index, { ...event.options }, event.meta);
    if (event.options.trackExistence) {
      index.fields.set(
        EXISTS_FIELD,
        new Field(
          EXISTS_FIELD,
          { ...defaultFieldOptions('set'), cacheType: 'none', cacheSize: 0 },
          undefined,
          holder.changes,
        ),
      );
    }
    holder.indexes.set(event.index, index);
    holder.changes.noteLayout();
  },
  IndexDeleted(holder, event) {
    assert(holder.indexes.delete(event.index), `apply: index ${event.index} missing`);
    fragmentLayout.version++;
    holder.changes.noteLayout();
  },
  FieldCreated(holder, event) {
    const index = indexOf(holder, event.index);
    assert(!index.fields.has(event.field), `apply: field ${event.field} exists`);
    index.fields.set(event.field, new Field(event.field, { ...event.options }, event.meta, holder.changes));
    holder.changes.noteLayout();
  },
  FieldDeleted(holder, event) {
    const index = indexOf(holder, event.index);
    assert(index.fields.delete(event.field), `apply: field ${event.field} missing`);
    fragmentLayout.version++;
    holder.changes.noteLayout();
    index.rowKeys.delete(event.field);
    // Deleting _exists turns existence tracking off for good (Pilosa 1.4 behaviour).
    if (event.field === EXISTS_FIELD) index.options.trackExistence = false;
  },
  BitsSet(holder, event) {
    const frag = fieldOf(holder, event.index, event.field).viewForWrite(event.view).fragmentForWrite(event.shard);
    // Existence first: adopted bitmaps may be emptied once adopted (Fragment.adoptRows).
    const existence = event.exists === true ? indexOf(holder, event.index).existence : undefined;
    if (existence !== undefined) {
      const ef = existence.viewForWrite(STANDARD_VIEW).fragmentForWrite(event.shard);
      for (const columns of event.columns) ef.addBits(0, columns);
    }
    if (event.deferred !== undefined) frag.defer(event.deferred);
    if (event.adopt === true) frag.adoptRows(event.rows, event.columns);
    else for (let i = 0; i < event.rows.length; i++) frag.addBits(event.rows[i], event.columns[i]);
  },
  BitsCleared(holder, event) {
    const frag = fieldOf(holder, event.index, event.field).view(event.view)?.fragment(event.shard);
    if (frag === undefined) return;
    for (let i = 0; i < event.rows.length; i++) frag.removeBits(event.rows[i], event.columns[i]);
  },
  RowCleared(holder, event) {
    const field = fieldOf(holder, event.index, event.field);
    for (const view of field.views.values()) for (const frag of view.fragments.values()) frag.clearRow(event.row);
  },
  RowStored(holder, event) {
    const view = fieldOf(holder, event.index, event.field).viewForWrite(event.view);
    for (const frag of view.fragments.values()) frag.clearRow(event.row);
    for (let i = 0; i < event.shards.length; i++)
      view.fragmentForWrite(event.shards[i]).setRow(event.row, event.columns[i]);
  },
  ValuesSet(holder, event) {
    const field = fieldOf(holder, event.index, event.field);
    const base = field.base;
    const depth = Math.max(field.bitDepth, bitDepthFor(event.values, base));
    if (depth !== field.bitDepth) holder.changes.noteLayout();
    field.bitDepth = depth;
    const frag = field.viewForWrite(bsiViewName(event.field)).fragmentForWrite(event.shard);
    setValues(frag, event.columns, event.values, base, field.bitDepth);
  },
  ValuesCleared(holder, event) {
    const field = fieldOf(holder, event.index, event.field);
    const frag = field.view(bsiViewName(event.field))?.fragment(event.shard);
    if (frag !== undefined) clearValues(frag, event.columns, field.bitDepth);
  },
  KeysAssigned(holder, event) {
    const index = indexOf(holder, event.index);
    const t = event.field === '' ? index.columnKeys : index.rowKeysFor(event.field);
    assert(
      event.firstId === t.nextId,
      `apply: keys for ${event.index}/${event.field} start at ${event.firstId}, expected ${t.nextId}`,
    );
    t.assign(event.firstId, event.keys);
  },
  RowAttrsSet(holder, event) {
    const field = fieldOf(holder, event.index, event.field);
    field.rowAttrs.set(event.row, mergeAttrs(field.rowAttrs.get(event.row), event.attrs));
    if (Object.keys(field.rowAttrs.get(event.row) ?? {}).length === 0) field.rowAttrs.delete(event.row);
  },
  ColumnAttrsSet(holder, event) {
    const index = indexOf(holder, event.index);
    const merged = mergeAttrs(index.columnAttrs.get(event.column), event.attrs);
    if (Object.keys(merged).length === 0) index.columnAttrs.delete(event.column);
    else index.columnAttrs.set(event.column, merged);
  },
  BitDepthRaised(holder, event) {
    const field = fieldOf(holder, event.index, event.field);
    if (event.bitDepth > field.bitDepth) holder.changes.noteLayout();
    field.bitDepth = Math.max(field.bitDepth, event.bitDepth);
  },
  KafkaOffsetsCommitted(holder, event) {
    const ingest = holder.ingests.get(event.ingest);
    assert(ingest !== undefined, `apply: ingest ${event.ingest} missing`);
    if (event.partitions.length > 0) {
      let byPartition = ingest.offsets.get(event.topic);
      if (byPartition === undefined) ingest.offsets.set(event.topic, (byPartition = new Map()));
      for (let i = 0; i < event.partitions.length; i++) byPartition.set(event.partitions[i], event.offsets[i]);
    }
    ingest.records += event.records;
    ingest.deadLettered += event.deadLettered;
  },
  IngestDefined(holder, event) {
    const existing = holder.ingests.get(event.name);
    if (existing !== undefined) Object.assign(existing, { spec: event.spec, paused: event.paused });
    else
      holder.ingests.set(event.name, {
        spec: event.spec,
        paused: event.paused,
        offsets: new Map(),
        records: 0,
        deadLettered: 0,
      });
  },
  IngestDeleted(holder, event) {
    assert(holder.ingests.delete(event.name), `apply: ingest ${event.name} missing`);
  },
  LegacyMetaSet(holder, event) {
    const index = indexOf(holder, event.index);
    if (event.value === null) index.legacyMeta.delete(event.key);
    else index.legacyMeta.set(event.key, event.value);
  },
  CommandApplied(holder, event) {
    const key = commandMarkKey(event.topic, event.partition);
    const maxMs = Math.max(holder.commandMarks.get(key)?.maxMs ?? event.timeMs, event.timeMs);
    const { topic, partition, offset, position } = event;
    holder.commandMarks.set(key, { topic, partition, offset, position, maxMs });
  },
};

function indexOf(holder: Holder, name: string): Index {
  const index = holder.indexes.get(name);
  assert(index !== undefined, `apply: index ${name} missing`);
  return index;
}

function fieldOf(holder: Holder, index: string, field: string): Field {
  const f = indexOf(holder, index).fields.get(field);
  assert(f !== undefined, `apply: field ${index}/${field} missing`);
  return f;
}

function mergeAttrs<T>(current: Record<string, T> | undefined, patch: Record<string, T | null>): Record<string, T> {
  const out: Record<string, T> = { ...(current ?? {}) };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}
