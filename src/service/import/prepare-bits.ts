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
import type { BitsImport } from './import-types.js';
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
  // Looked at without waiting for durability: commit() checks that the same objects still hold.
  const { index, field } = engine.peekApplied((h) => lookup(h, wide.index, wide.field, wide.metaOffset));
  if (index.options.keys || field.options.keys || isExclusive(field)) return undefined;
  const exists = !wide.clear && index.existence !== undefined;
  const events = await runStepsYielding(build(index, field, wide, exists), engine.clock, sliceMs);
  // Options change in place (FieldOptionsChanged): the ones built with must still be the field's.
  const options = field.options;
  return {
    commit(h) {
      const now = lookup(h, wide.index, wide.field, wide.metaOffset);
      if (now.index !== index || now.field !== field || now.field.options !== options) return undefined;
      if ((!wide.clear && index.existence !== undefined) !== exists) return undefined;
      return events;
    },
  };
}

function* build(index: ReadonlyIndex, field: ReadonlyField, wide: BitsImport, exists: boolean): Steps<PreparedEvent[]> {
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
