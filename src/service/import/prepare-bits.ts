// A large bits import built off to the side: validated, bucketed into row bitmaps and encoded
// while other requests are answered (the work yields to the event loop every few ms), with
// nothing visible. Engine.commit({ prepared }) then commits it in one short step and applies it once it
// is durable, so a 100 MB import neither stalls the server nor makes a query wait for its fsync
// (docs/ARCHITECTURE.md, "Large imports").
//
// Only imports whose events depend on nothing a concurrent write may change take this path: IDs
// rather than keys (keys are assigned in the write), and no mutex or bool field (a set there
// clears the column's other rows as they are at the write). Others return undefined and are
// decided in one step by ImportService.decideBits.
import type { Engine } from '../../engine/engine.js';
import { PreparedEvent } from '../../events/prepared.js';
import { runStepsYielding, type Steps } from '../../util/steps.js';
import { isExclusive } from '../write-model/bits.js';
import { bucketBits, bucketEvents } from './bits-buckets.js';
import { lookup, rebased, validateBits } from './import-checks.js';
import type { BitsImport, ImportField, ImportIndex } from './import-types.js';
import type { ReadonlyField, ReadonlyHolder, ReadonlyIndex } from '../../state/readonly.js';

/** Bits per event: encoding one takes a few ms, and the pieces are yielded between. */
const EVENT_BITS = 1 << 20;

export interface PreparedBits {
  /**
   * The events to commit, if the index and field are still the ones they were built for; a
   * missing one is the usual 404, and undefined means decide afresh (the field was recreated).
   */
  commit(h: ReadonlyHolder): readonly PreparedEvent[] | undefined;
}

export async function prepareBits(
  engine: Engine,
  wide: BitsImport,
  /** How long a stretch of the work runs before it yields (runStepsYielding's default: 5 ms). */
  sliceMs?: number,
): Promise<PreparedBits | undefined> {
  const target = bitsTarget(engine, wide);
  if (target === undefined) return undefined;
  const { index, field, exists } = target;
  return target.prepared(await runStepsYielding(buildBitsEvents(index, field, wide, exists), engine.clock, sliceMs));
}

/** What a bits import's events are built for, as the engine holds it now. */
export interface BitsTarget {
  index: ReadonlyIndex;
  field: ReadonlyField;
  /** Whether its sets mark their columns in the index's existence field. */
  exists: boolean;
  /** The events built for it, committed only while it still holds (PreparedBits.commit). */
  prepared(events: readonly PreparedEvent[]): PreparedBits;
}

/**
 * The index and field a bits import's events would be built for, looked at without waiting for
 * durability (the commit checks that the same objects still hold); undefined for the imports
 * decided in one step (above). Throws the usual 404 for a missing index or field.
 */
export function bitsTarget(
  engine: Engine,
  where: Pick<BitsImport, 'index' | 'field' | 'clear' | 'metaOffset'>,
): BitsTarget | undefined {
  const { index, field } = engine.peekApplied((h) => lookup(h, where.index, where.field, where.metaOffset));
  if (index.options.keys || field.options.keys || isExclusive(field)) return undefined;
  const exists = !where.clear && index.existence !== undefined;
  // Options change in place (FieldOptionsChanged): the ones built with must still be the field's.
  const options = field.options;
  return {
    index,
    field,
    exists,
    prepared: (events) => ({
      commit(h) {
        const now = lookup(h, where.index, where.field, where.metaOffset);
        if (now.index !== index || now.field !== field || now.field.options !== options) return undefined;
        if ((!where.clear && index.existence !== undefined) !== exists) return undefined;
        return events;
      },
    }),
  };
}

/** A bits import's events, validated, bucketed and encoded in pieces (here or on a worker thread). */
export function* buildBitsEvents(
  index: ImportIndex,
  field: ImportField,
  wide: BitsImport,
  exists: boolean,
): Steps<PreparedEvent[]> {
  const { req, baseShard } = rebased(wide);
  const n = yield* validateBits(index, field, req, baseShard);
  const out: PreparedEvent[] = [];
  for (const b of yield* bucketBits(index, field, req, req.rowIds, req.columnIds, n, baseShard)) {
    for (const e of bucketEvents(index, field, b, req.clear, exists, EVENT_BITS)) {
      out.push(PreparedEvent.of(e));
      yield;
    }
  }
  return out;
}
