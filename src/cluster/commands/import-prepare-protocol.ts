// The messages between a node's request thread and its import prepare thread (import-prepare-thread.ts).
import type { EncodedEvent } from '../../events/codec.js';
import type { BitsImport, ImportField, ImportIndex } from '../../service/import/import-types.js';

/** A bits import, less the pairs its body carries. */
export type PrepareWhere = Pick<BitsImport, 'index' | 'field' | 'shard' | 'clear' | 'metaOffset'>;

export interface PrepareAsk {
  id: number;
  /** Copies of the index's and field's names and options, as the request thread looked them up. */
  index: ImportIndex;
  field: ImportField;
  where: PrepareWhere;
  exists: boolean;
  /** The protobuf ImportRequest. */
  body: Uint8Array;
}

export type PrepareAnswer = { id: number; records: EncodedEvent[] } | { id: number; error: string };

/** The buffers to move rather than copy: each record's own (a payload that is a slice of a larger one is copied). */
export function recordBuffers(records: readonly EncodedEvent[]): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const { payload } of records) {
    const b = payload.buffer;
    if (b instanceof ArrayBuffer && payload.byteOffset === 0 && payload.byteLength === b.byteLength) out.add(b);
  }
  return [...out];
}
