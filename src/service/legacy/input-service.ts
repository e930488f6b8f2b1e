// Legacy input-definition use cases: define (creating the listed frames in the same write),
// read, delete, and ingest (all records of a request in one atomic import).
import { badRequest, notFound } from '../../domain/errors.js';
import { indexNotFound, inputDefinitionExists, inputDefinitionNotFound } from '../../domain/messages.js';
import { validateName } from '../../domain/names.js';
import { LIMITS } from '../../config/limits.js';
import type { Engine } from '../../engine/engine.js';
import type { CommitContext } from '../../engine/ports.js';
import type { ImportService } from '../import/import-service.js';
import type { BitsImport } from '../import/import-types.js';
import { incarnation } from '../schema-service.js';
import { parseFrameOptions } from './frame-options.js';
import { frameEvents } from './frame-service.js';
import { type InputDefinition, parseInputDefinition } from './input-definition.js';
import { ingestRecords } from './input-ingest.js';
import { columnLabel, inputDefinitionJson, setInputDefinition } from './legacy-meta.js';
import type { ReadonlyHolder, ReadonlyIndex } from '../../state/readonly.js';

/** What the input-definition routes call (cluster mode passes one that writes through Kafka). */
export interface InputApi {
  define(index: string, name: string, body: unknown): Promise<void>;
  get(index: string, name: string): Promise<InputDefinition>;
  delete(index: string, name: string): Promise<void>;
  ingest(index: string, name: string, body: unknown): Promise<void>;
}

/** The stored definition `name` of `index`, with a single node's errors. */
export function storedDefinition(h: ReadonlyHolder, index: string, name: string): InputDefinition {
  return definitionOf(indexOf(h, index), name);
}

export class InputService implements InputApi {
  constructor(
    private readonly engine: Engine,
    private readonly imports: Pick<ImportService, 'decideBits' | 'decideValues'>,
  ) {}

  /** `ctx`: the commit's context (cluster mode: the meta command's position and incarnation). */
  define(index: string, name: string, body: unknown, ctx: CommitContext = {}): Promise<void> {
    validateName(name);
    return this.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        const idx = indexOf(h, index);
        const def = parseInputDefinition(body, columnLabel(idx));
        if (inputDefinitionJson(idx, name) !== undefined) throw inputDefinitionExists();
        for (const f of def.fields) {
          for (const a of f.actions ?? [])
            if (!def.frames.some((x) => x.name === a.frame) && !idx.field(a.frame))
              throw badRequest(`frame not found: ${a.frame}`);
        }
        // Validate every frame before emitting any, so a bad one leaves nothing behind.
        const fresh = def.frames.filter(
          (f, i) => !idx.field(f.name) && def.frames.findIndex((g) => g.name === f.name) === i,
        );
        const events = fresh.flatMap((f) => frameEvents(idx, f.name, parseFrameOptions(f.options)));
        for (const e of events) sink.emit(e.type === 'FieldCreated' ? { ...e, ...incarnation(ctx) } : e);
        sink.emit(setInputDefinition(index, name, JSON.stringify(def)));
      },
    });
  }

  get(index: string, name: string): Promise<InputDefinition> {
    return this.engine.read((h) => storedDefinition(h, index, name));
  }

  delete(index: string, name: string, ctx: CommitContext = {}): Promise<void> {
    return this.engine.commit({
      ...ctx,
      decide: (h, sink) => {
        definitionOf(indexOf(h, index), name);
        sink.emit(setInputDefinition(index, name, null));
      },
    });
  }

  ingest(index: string, name: string, body: unknown): Promise<void> {
    return this.engine.commit({
      decide: (h, sink) => {
        for (const req of inputImports(h, index, name, body)) this.imports.decideBits(h, sink, req);
      },
    });
  }
}

/**
 * The bits imports of one ingest through a definition, one per frame, every frame checked first
 * (decideBits validates one frame at a time, and emits as it goes). Cluster mode sends them as
 * one Kafka transaction of import commands.
 */
export function inputImports(h: ReadonlyHolder, index: string, name: string, body: unknown): BitsImport[] {
  if (Array.isArray(body) && body.length > LIMITS.maxImportItems)
    throw badRequest(`more than ${LIMITS.maxImportItems} input records in one request`);
  const idx = indexOf(h, index);
  const perFrame = ingestRecords(definitionOf(idx, name), body);
  for (const frame of perFrame.keys()) checkFrame(idx, frame);
  return [...perFrame].map(([frame, bits]) => {
    const timed = idx.field(frame)!.options.type === 'time' && bits.timestamps.some((t) => t !== 0n);
    return {
      index,
      field: frame,
      rowIds: Float64Array.from(bits.rows),
      columnIds: Float64Array.from(bits.columns),
      // A timestamp on a frame without a time quantum only sets the standard view (as in 0.x).
      timestamps: timed ? BigInt64Array.from(bits.timestamps) : null,
      rowKeys: [],
      columnKeys: [],
      clear: false,
    };
  });
}

function indexOf(h: ReadonlyHolder, name: string): ReadonlyIndex {
  const idx = h.index(name);
  if (!idx) throw indexNotFound();
  return idx;
}

/** What decideBits would refuse, checked for all frames before any of them emits. */
function checkFrame(idx: ReadonlyIndex, frame: string): void {
  const f = idx.field(frame);
  if (!f) throw notFound(`frame not found: ${frame}`);
  if (f.options.type !== 'set' && f.options.type !== 'time' && f.options.type !== 'mutex')
    throw badRequest(
      `frame ${frame} is a ${f.options.type} field; input definitions set bits in set, time and mutex fields`,
    );
  if (f.options.keys || idx.options.keys)
    throw badRequest(`frame ${frame} uses string keys; input definitions set row and column IDs`);
}

function definitionOf(idx: ReadonlyIndex, name: string): InputDefinition {
  const json = inputDefinitionJson(idx, name);
  if (json === undefined) throw inputDefinitionNotFound();
  return JSON.parse(json) as InputDefinition;
}
