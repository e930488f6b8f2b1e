// Schema events: indexes and fields created and deleted.
import { EXISTS_FIELD } from '../../domain/names.js';
import { defaultFieldOptions } from '../../domain/types.js';
import { indexOf } from '../apply-support.js';
import { Field } from '../../state/field.js';
import { Index } from '../../state/index-state.js';
import { fragmentLayout } from '../../state/view.js';
import { assert } from '../../util/assert.js';
import type { CacheType, FieldOptions, FieldType, IndexOptions } from '../../domain/types.js';
import type { EventKinds } from '../kind.js';
import { message, obj, num, str } from '../proto-fields.js';

export type SchemaEvent =
  /**
   * `meta` (cluster mode): the offset in NAME.meta of the command that created it, so a write
   * sent before a deletion and re-creation under the same name is told from one sent after it.
   */
  | { type: 'IndexCreated'; index: string; options: IndexOptions; meta?: string }
  | { type: 'IndexDeleted'; index: string }
  | { type: 'FieldCreated'; index: string; field: string; options: FieldOptions; meta?: string }
  | { type: 'FieldDeleted'; index: string; field: string }
  /**
   * Cluster mode: a field's options replaced by the meta command at offset `meta`, its views and
   * bits kept; the old options stay, for the commands sent before it (Field.priorOptions).
   */
  | { type: 'FieldOptionsChanged'; index: string; field: string; options: FieldOptions; meta: string };

const M = {
  IndexCreated: message('IndexCreated'),
  IndexDeleted: message('IndexDeleted'),
  FieldCreated: message('FieldCreated'),
  FieldDeleted: message('FieldDeleted'),
  FieldOptionsChanged: message('FieldOptionsChanged'),
};

/** A cluster incarnation when recorded (records without one decode as before). */
const incarnation = (v: unknown): { meta?: string } => (typeof v === 'string' && v !== '' ? { meta: v } : {});

function fieldOptionsOut(o: FieldOptions): Record<string, unknown> {
  return { ...o, min: o.min.toString(), max: o.max.toString() };
}

function fieldOptionsIn(o: Record<string, unknown>): FieldOptions {
  return {
    type: (str(o.type) || 'set') as FieldType,
    cacheType: (str(o.cacheType) || 'none') as CacheType,
    cacheSize: num(o.cacheSize ?? 0),
    keys: o.keys === true,
    min: BigInt(str(o.min) || '0'),
    max: BigInt(str(o.max) || '0'),
    timeQuantum: str(o.timeQuantum),
    noStandardView: o.noStandardView === true,
  };
}

export const SCHEMA_EVENTS: EventKinds<SchemaEvent> = {
  IndexCreated: {
    code: 1,
    replay: 'barrier',
    snapshot: 'global',
    apply(holder, event) {
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
    encode: (e) => M.IndexCreated.encode({ index: e.index, options: e.options, meta: e.meta ?? '' }).finish(),
    decode: (payload) => {
      const m = obj(M.IndexCreated, payload);
      const o = (m.options ?? {}) as Record<string, unknown>;
      const options: IndexOptions = { keys: o.keys === true, trackExistence: o.trackExistence === true };
      return { type: 'IndexCreated', index: str(m.index), options, ...incarnation(m.meta) };
    },
  },
  IndexDeleted: {
    code: 2,
    replay: 'barrier',
    snapshot: 'never',
    apply(holder, event) {
      assert(holder.indexes.delete(event.index), `apply: index ${event.index} missing`);
      fragmentLayout.version++;
      holder.changes.noteLayout();
    },
    encode: (e) => M.IndexDeleted.encode({ index: e.index }).finish(),
    decode: (payload) => ({ type: 'IndexDeleted', index: str(obj(M.IndexDeleted, payload).index) }),
  },
  FieldCreated: {
    code: 3,
    replay: 'barrier',
    snapshot: 'global',
    apply(holder, event) {
      const index = indexOf(holder, event.index);
      assert(!index.fields.has(event.field), `apply: field ${event.field} exists`);
      index.fields.set(event.field, new Field(event.field, { ...event.options }, event.meta, holder.changes));
      holder.changes.noteLayout();
    },
    encode: (e) =>
      M.FieldCreated.encode({
        index: e.index,
        field: e.field,
        options: fieldOptionsOut(e.options),
        meta: e.meta ?? '',
      }).finish(),
    decode: (payload) => {
      const m = obj(M.FieldCreated, payload);
      const options = fieldOptionsIn((m.options ?? {}) as Record<string, unknown>);
      return { type: 'FieldCreated', index: str(m.index), field: str(m.field), options, ...incarnation(m.meta) };
    },
  },
  FieldDeleted: {
    code: 4,
    replay: 'barrier',
    snapshot: 'never',
    apply(holder, event) {
      const index = indexOf(holder, event.index);
      assert(index.fields.delete(event.field), `apply: field ${event.field} missing`);
      fragmentLayout.version++;
      holder.changes.noteLayout();
      index.rowKeys.delete(event.field);
      // Deleting _exists turns existence tracking off for good (Pilosa 1.4 behaviour).
      if (event.field === EXISTS_FIELD) index.options.trackExistence = false;
    },
    encode: (e) => M.FieldDeleted.encode({ index: e.index, field: e.field }).finish(),
    decode: (payload) => {
      const m = obj(M.FieldDeleted, payload);
      return { type: 'FieldDeleted', index: str(m.index), field: str(m.field) };
    },
  },
  FieldOptionsChanged: {
    code: 20,
    replay: 'barrier',
    snapshot: 'global',
    apply(holder, event) {
      const field = indexOf(holder, event.index).fields.get(event.field);
      assert(field !== undefined, `apply: field ${event.field} missing`);
      const last = field.priorOptions.at(-1)?.until;
      assert(last === undefined || BigInt(last) < BigInt(event.meta), `apply: options of ${event.field} out of order`);
      field.priorOptions.push({ until: event.meta, options: field.options });
      field.options = { ...event.options };
      holder.changes.noteLayout();
    },
    encode: (e) =>
      M.FieldOptionsChanged.encode({
        index: e.index,
        field: e.field,
        options: fieldOptionsOut(e.options),
        meta: e.meta,
      }).finish(),
    decode: (payload) => {
      const m = obj(M.FieldOptionsChanged, payload);
      const options = fieldOptionsIn((m.options ?? {}) as Record<string, unknown>);
      return { type: 'FieldOptionsChanged', index: str(m.index), field: str(m.field), options, meta: str(m.meta) };
    },
  },
};
