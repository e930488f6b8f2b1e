// Schema use cases: create and delete indexes and fields, apply a whole schema. Each decides its
// events against the current state (validating first, so bad input changes nothing).
import { badRequest, conflict } from '../domain/errors.js';
import { fieldExists, fieldNotFound, indexExists, indexNotFound } from '../domain/messages.js';
import { EXISTS_FIELD, isReservedField, validateName } from '../domain/names.js';
import type { FieldOptions, IndexOptions } from '../domain/types.js';
import type { Engine } from '../engine/engine.js';
import type { CommitContext } from '../engine/ports.js';
import type { EventSink } from '../events/types.js';
import { parseFieldOptions, int64 } from './field-options.js';
import type { ReadonlyHolder } from '../state/readonly.js';

export function parseIndexOptions(body: unknown): IndexOptions {
  const opts: IndexOptions = { keys: false, trackExistence: true };
  if (body === undefined || body === null) return opts;
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('request body must be a JSON object');
  for (const k of Object.keys(body)) if (k !== 'options') throw badRequest(`unknown key: ${k}`);
  const o = (body as { options?: unknown }).options;
  if (o === undefined || o === null) return opts;
  if (typeof o !== 'object' || Array.isArray(o)) throw badRequest('options is not an object');
  for (const [k, v] of Object.entries(o)) {
    if (k !== 'keys' && k !== 'trackExistence') throw badRequest(`unknown key: ${k}`);
    if (typeof v !== 'boolean') throw badRequest(`${k} must be a boolean`);
    opts[k] = v;
  }
  return opts;
}

/** Field creation body: `{options:{…}}`, and/or the top-level `fields` array of int fields. */
export function parseFieldBody(body: unknown): {
  options: FieldOptions;
  extraIntFields: { name: string; options: FieldOptions }[];
} {
  if (body === undefined || body === null) return { options: parseFieldOptions(undefined), extraIntFields: [] };
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('request body must be a JSON object');
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) if (k !== 'options' && k !== 'fields') throw badRequest(`unknown key: ${k}`);
  const extra: { name: string; options: FieldOptions }[] = [];
  if (b.fields !== undefined) {
    if (!Array.isArray(b.fields)) throw badRequest('fields must be an array');
    for (const f of b.fields as unknown[]) {
      if (typeof f !== 'object' || f === null) throw badRequest('each entry of fields must be an object');
      const e = f as Record<string, unknown>;
      for (const k of Object.keys(e))
        if (!['name', 'type', 'min', 'max'].includes(k)) throw badRequest(`unknown key in fields: ${k}`);
      if (typeof e.name !== 'string') throw badRequest('fields[].name must be a string');
      validateName(e.name);
      if (e.type !== undefined && e.type !== 'int')
        throw badRequest(`fields[].type must be int, got ${String(e.type)}`);
      const options = parseFieldOptions({
        type: 'int',
        ...(e.min !== undefined ? { min: int64(e.min, 'min') } : {}),
        ...(e.max !== undefined ? { max: int64(e.max, 'max') } : {}),
      });
      extra.push({ name: e.name, options });
    }
  }
  return { options: parseFieldOptions(b.options), extraIntFields: extra };
}

/**
 * Cluster mode: the incarnation of what a meta command creates (its offset in NAME.meta, from its
 * CommandApplied), so the cluster tells a re-created index or field from the one deleted before.
 */
export function incarnation(ctx: CommitContext): { meta?: string } {
  return ctx.applied?.topic === 'meta' ? { meta: ctx.applied.offset } : {};
}

export class SchemaService {
  constructor(private readonly engine: Engine) {}

  createIndex(name: string, options: IndexOptions, ctx: CommitContext = {}): Promise<void> {
    validateName(name);
    return this.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        if (h.index(name)) throw indexExists();
        sink.emit({ type: 'IndexCreated', index: name, options, ...incarnation(ctx) });
      },
    });
  }

  deleteIndex(name: string, ctx: CommitContext = {}): Promise<void> {
    return this.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        if (!h.index(name)) throw indexNotFound();
        sink.emit({ type: 'IndexDeleted', index: name });
      },
    });
  }

  createField(
    index: string,
    field: string,
    parsed: ReturnType<typeof parseFieldBody>,
    ctx: CommitContext = {},
  ): Promise<void> {
    validateName(field);
    return this.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        const idx = h.index(index);
        if (!idx) throw indexNotFound();
        if (idx.field(field)) throw fieldExists();
        for (const e of parsed.extraIntFields)
          if (idx.field(e.name) || e.name === field) throw conflict(`field ${e.name} already exists`);
        sink.emit({ type: 'FieldCreated', index, field, options: parsed.options, ...incarnation(ctx) });
        for (const e of parsed.extraIntFields)
          sink.emit({ type: 'FieldCreated', index, field: e.name, options: e.options, ...incarnation(ctx) });
      },
    });
  }

  deleteField(index: string, field: string, ctx: CommitContext = {}): Promise<void> {
    return this.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        const idx = h.index(index);
        if (!idx) throw indexNotFound();
        if (!idx.field(field) || (field === EXISTS_FIELD && !idx.options.trackExistence)) throw fieldNotFound();
        // Pilosa 1.4 let `_exists` be deleted, which silently and permanently turned existence
        // tracking off (Not() and ClearRow then read wrong): reserved fields are refused instead.
        if (isReservedField(field))
          throw badRequest(
            `field ${field} is reserved: it belongs to the index (trackExistence) and cannot be deleted`,
          );
        sink.emit({ type: 'FieldDeleted', index, field });
      },
    });
  }

  /** POST /schema: creates every index and field of the body that does not exist yet, atomically. */
  applySchema(
    indexes: { name: string; options: IndexOptions; fields: { name: string; options: FieldOptions }[] }[],
    ctx: CommitContext = {},
  ): Promise<void> {
    for (const i of indexes) {
      validateName(i.name);
      for (const f of i.fields) validateName(f.name);
    }
    return this.engine.commit({
      ...ctx,
      decide: (h: ReadonlyHolder, sink: EventSink) => {
        for (const i of indexes) {
          const existing = h.index(i.name);
          if (!existing) sink.emit({ type: 'IndexCreated', index: i.name, options: i.options, ...incarnation(ctx) });
          for (const f of i.fields) {
            if (!h.index(i.name)?.field(f.name))
              sink.emit({
                type: 'FieldCreated',
                index: i.name,
                field: f.name,
                options: f.options,
                ...incarnation(ctx),
              });
          }
        }
      },
    });
  }
}
