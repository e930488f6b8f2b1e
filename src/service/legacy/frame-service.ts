// Legacy frame use cases (0.5–0.10): a frame is a current field (set, or time when it has a
// time quantum) plus LegacyMetaSet metadata; its int fields are int fields `<frame>_<name>`.
// Each use case decides all its events in one engine.commit, validating before emitting. In
// cluster mode each is one meta command, and the command applier passes its CommitContext.
import { badRequest, conflict } from '../../domain/errors.js';
import {
  fieldExists,
  fieldNotFound,
  frameExists,
  frameNotFound,
  indexExists,
  indexNotFound,
} from '../../domain/messages.js';
import { isReservedField, validateName } from '../../domain/names.js';
import { DEFAULT_COLUMN_LABEL } from '../../pql/legacy.js';
import type { Engine } from '../../engine/engine.js';
import type { Event } from '../../events/types.js';
import type { IndexOptions } from '../../domain/types.js';
import {
  type FrameIntField,
  type FrameOptionsInput,
  frameFieldOptions,
  frameMetaFrom,
  intFieldOptions,
  validateLabel,
} from './frame-options.js';
import {
  columnLabel,
  frameMeta,
  frameMetaOrDefault,
  indexTimeQuantum,
  intFieldName,
  setColumnLabel,
  setFrameMeta,
  setIndexTimeQuantum,
} from './legacy-meta.js';
import type { ReadonlyHolder, ReadonlyIndex } from '../../state/readonly.js';
import type { CommitContext } from '../../engine/ports.js';
import { incarnation } from '../schema-service.js';

export interface FrameIntFieldInfo {
  name: string;
  type: 'int';
  min: bigint;
  max: bigint;
}

export class FrameService {
  constructor(private readonly engine: Engine) {}

  /** POST /index/{i} with 0.x options: the index plus its column label and default time quantum. */
  createLegacyIndex(
    index: string,
    options: IndexOptions,
    legacy: { columnLabel?: string; timeQuantum?: string },
    ctx: CommitContext = {},
  ): Promise<void> {
    validateName(index);
    if (legacy.columnLabel !== undefined) validateLabel(legacy.columnLabel, 'columnLabel');
    return this.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        if (h.index(index)) throw indexExists();
        sink.emit({ type: 'IndexCreated', index, options, ...incarnation(ctx) });
        if (legacy.columnLabel !== undefined && legacy.columnLabel !== DEFAULT_COLUMN_LABEL)
          sink.emit(setColumnLabel(index, legacy.columnLabel));
        if (legacy.timeQuantum !== undefined && legacy.timeQuantum !== '')
          sink.emit(setIndexTimeQuantum(index, legacy.timeQuantum));
      },
    });
  }

  createFrame(index: string, frame: string, input: FrameOptionsInput, ctx: CommitContext = {}): Promise<void> {
    validateName(frame);
    return this.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        const idx = indexOf(h, index);
        if (idx.field(frame)) throw frameExists();
        for (const e of frameEvents(idx, frame, input))
          sink.emit(e.type === 'FieldCreated' ? { ...e, ...incarnation(ctx) } : e);
      },
    });
  }

  /** 0.x ignored deleting a missing frame; a missing index is still an error. */
  deleteFrame(index: string, frame: string, ctx: CommitContext = {}): Promise<void> {
    return this.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        const idx = indexOf(h, index);
        if (!idx.field(frame)) return;
        if (isReservedField(frame))
          throw badRequest(`frame ${frame} is reserved: it belongs to the index and cannot be deleted`);
        for (const f of frameMeta(idx, frame)?.fields ?? []) {
          if (idx.field(intFieldName(frame, f)))
            sink.emit({ type: 'FieldDeleted', index, field: intFieldName(frame, f) });
        }
        sink.emit({ type: 'FieldDeleted', index, field: frame });
        if (frameMeta(idx, frame) !== undefined) sink.emit(setFrameMeta(index, frame, null));
      },
    });
  }

  /** PATCH /index/{i}/time-quantum: the default for frames created later without one. */
  setIndexTimeQuantum(index: string, q: string, ctx: CommitContext = {}): Promise<void> {
    return this.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        indexOf(h, index);
        sink.emit(setIndexTimeQuantum(index, q));
      },
    });
  }

  /**
   * PATCH /index/{i}/frame/{f}/time-quantum. The quantum decides the field type (time or set),
   * so changing it re-creates the field: allowed only while the frame holds no bits, row
   * attributes or row keys (the 0.x docs: "call at most once, right after creating the frame").
   */
  setFrameTimeQuantum(
    index: string,
    frame: string,
    q: string,
    ctx: CommitContext = {},
    /**
     * Whether this node's bits count as the frame's data. A cluster holder has only its shards'
     * bits, and every holder must decide alike: there the coordinator asks the cluster first.
     */
    localBits = true,
  ): Promise<void> {
    return this.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        const idx = indexOf(h, index);
        const field = idx.field(frame);
        if (!field) throw frameNotFound();
        const meta = frameMetaOrDefault(idx, frame);
        if (field.options.type !== 'set' && field.options.type !== 'time')
          throw badRequest(`frame ${frame} is a ${field.options.type} field; its time quantum cannot be set`);
        if (field.options.timeQuantum !== q) {
          const hasData =
            localBits && [...field.views.values()].some((v) => [...v.fragments.values()].some((f) => !f.isEmpty));
          if (hasData || field.rowAttrs.size > 0 || (idx.rowKeys.get(frame)?.size ?? 0) > 0) {
            throw badRequest(`the time quantum of frame ${frame} can only be changed while it holds no data`);
          }
          // '' as the index default: an empty quantum turns the frame back into a set field.
          const options = {
            ...frameFieldOptions(
              { fields: [], timeQuantum: q, cacheType: meta.cacheType, cacheSize: meta.cacheSize },
              '',
            ),
            keys: field.options.keys,
          };
          // Cluster mode: the field is kept and its options changed from this meta offset on, so a
          // write sent before (the coordinator's no-data check cannot hold off one in flight) is
          // kept, in the views of the quantum it was sent against (state/field-as-of.ts).
          const at = incarnation(ctx).meta;
          if (at !== undefined) sink.emit({ type: 'FieldOptionsChanged', index, field: frame, options, meta: at });
          else {
            sink.emit({ type: 'FieldDeleted', index, field: frame });
            sink.emit({ type: 'FieldCreated', index, field: frame, options });
          }
        }
        sink.emit(setFrameMeta(index, frame, { ...meta, timeQuantum: q }));
      },
    });
  }

  /** POST /index/{i}/frame/{f}/field/{name}: int field `<f>_<name>`. */
  createFrameField(index: string, frame: string, f: FrameIntField, ctx: CommitContext = {}): Promise<void> {
    const { name, options } = intFieldOptions(frame, f);
    return this.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        const idx = indexOf(h, index);
        if (!idx.field(frame)) throw frameNotFound();
        const meta = frameMetaOrDefault(idx, frame);
        if (meta.fields.includes(f.name) || idx.field(name)) throw fieldExists();
        sink.emit({ type: 'FieldCreated', index, field: name, options, ...incarnation(ctx) });
        sink.emit(setFrameMeta(index, frame, { ...meta, fields: [...meta.fields, f.name] }));
      },
    });
  }

  deleteFrameField(index: string, frame: string, name: string, ctx: CommitContext = {}): Promise<void> {
    return this.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        const idx = indexOf(h, index);
        if (!idx.field(frame)) throw frameNotFound();
        const meta = frameMetaOrDefault(idx, frame);
        if (!meta.fields.includes(name)) throw fieldNotFound();
        if (idx.field(intFieldName(frame, name)))
          sink.emit({ type: 'FieldDeleted', index, field: intFieldName(frame, name) });
        sink.emit(setFrameMeta(index, frame, { ...meta, fields: meta.fields.filter((n) => n !== name) }));
      },
    });
  }

  frameFields(index: string, frame: string): Promise<FrameIntFieldInfo[]> {
    return this.engine.read((h) => {
      const idx = indexOf(h, index);
      if (!idx.field(frame)) throw frameNotFound();
      const out: FrameIntFieldInfo[] = [];
      for (const name of frameMetaOrDefault(idx, frame).fields) {
        const o = idx.field(intFieldName(frame, name))?.options;
        if (o !== undefined) out.push({ name, type: 'int', min: o.min, max: o.max });
      }
      return out;
    });
  }
}

/**
 * The events of a new frame: its field, its int fields and its metadata. Throws (emitting
 * nothing) when the frame is invalid; input definitions plan all their frames before emitting.
 */
export function frameEvents(idx: ReadonlyIndex, frame: string, input: FrameOptionsInput): Event[] {
  const options = frameFieldOptions(input, indexTimeQuantum(idx));
  if (input.rowLabel !== undefined && input.rowLabel === columnLabel(idx))
    throw badRequest('row label cannot match column label');
  const ints = input.fields.map((f) => intFieldOptions(frame, f));
  for (const i of ints) if (idx.field(i.name) || i.name === frame) throw conflict(`field ${i.name} already exists`);
  return [
    { type: 'FieldCreated', index: idx.name, field: frame, options },
    ...ints.map((i): Event => ({ type: 'FieldCreated', index: idx.name, field: i.name, options: i.options })),
    setFrameMeta(idx.name, frame, frameMetaFrom(input, options)),
  ];
}

function indexOf(h: ReadonlyHolder, name: string): ReadonlyIndex {
  const idx = h.index(name);
  if (!idx) throw indexNotFound();
  return idx;
}
