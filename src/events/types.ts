// The event union: past-tense facts, each carrying everything apply() needs (assigned IDs,
// resolved views and shards). apply() has no clock, no randomness and no validation.
import type { AttrPatch, FieldOptions, IndexOptions } from '../domain/types.js';
import type { Bitmap, ColumnOffsets } from '../roaring/bitmap.js';
import type { FrozenRow } from '../roaring/frozen.js';

/** The bits of one (field, view, shard) a bit delta sets or clears: each row's column offsets. */
export interface BitDelta {
  index: string;
  field: string;
  view: string;
  shard: number;
  rows: number[];
  columns: ColumnOffsets[];
}

export type Event =
  /**
   * `meta` (cluster mode): the offset in NAME.meta of the command that created it, so a write
   * sent before a deletion and re-creation under the same name is told from one sent after it.
   */
  | { type: 'IndexCreated'; index: string; options: IndexOptions; meta?: string }
  | { type: 'IndexDeleted'; index: string }
  | { type: 'FieldCreated'; index: string; field: string; options: FieldOptions; meta?: string }
  | { type: 'FieldDeleted'; index: string; field: string }
  /**
   * Bulk or single bit sets in one (field, view, shard): the column offsets of each row.
   * `exists`: the columns also enter the index's existence field (row 0 of `_exists`), so an
   * import does not log every column a second time (half the log bytes of a one-row import).
   * `adopt` (never logged): the bitmaps are fresh and nothing else holds them (a snapshot load,
   * an import's own row bitmaps), so apply may keep them as the rows instead of copying them.
   * `deferred` (never logged; a snapshot load only): the fragment's rows, as bitmaps or as
   * frozen bytes to view on first read, made when first needed; `rows` and `columns` are then
   * empty. Only an empty fragment takes them deferred.
   */
  | (BitDelta & {
      type: 'BitsSet';
      exists?: boolean;
      adopt?: boolean;
      deferred?: () => { rows: number[]; columns: Bitmap[] } | { rows: number[]; frozen: FrozenRow[] };
    })
  | (BitDelta & { type: 'BitsCleared' })
  /** ClearRow: the row removed from every view and shard of the field. */
  | { type: 'RowCleared'; index: string; field: string; row: number }
  /** Store: the row of `view` replaced wholesale; shards not listed end up empty for that row. */
  | { type: 'RowStored'; index: string; field: string; view: string; row: number; shards: number[]; columns: Bitmap[] }
  /** Int field values for columns (offsets) of one shard; apply does the BSI encoding. */
  | { type: 'ValuesSet'; index: string; field: string; shard: number; columns: Uint32Array; values: BigInt64Array }
  | { type: 'ValuesCleared'; index: string; field: string; shard: number; columns: Uint32Array }
  /** Keys given sequential IDs from firstId; field '' means the index's column keys. */
  | { type: 'KeysAssigned'; index: string; field: string; firstId: number; keys: string[] }
  | { type: 'RowAttrsSet'; index: string; field: string; row: number; attrs: AttrPatch }
  | { type: 'ColumnAttrsSet'; index: string; column: number; attrs: AttrPatch }
  /** int fields: BSI magnitude bits raised (snapshots carry it; live writes grow it in ValuesSet). */
  | { type: 'BitDepthRaised'; index: string; field: string; bitDepth: number }
  /**
   * Kafka-fed import: next offsets to consume per partition, committed in the same batch as the
   * bits they produced; records/deadLettered are counts added by this commit (exactly-once totals).
   */
  | {
      type: 'KafkaOffsetsCommitted';
      ingest: string;
      topic: string;
      partitions: number[];
      offsets: string[];
      records: number;
      deadLettered: number;
    }
  /** An ingest definition (src/kafka), stored as opaque JSON; re-defining keeps its offsets. */
  | { type: 'IngestDefined'; name: string; spec: string; paused: boolean }
  | { type: 'IngestDeleted'; name: string }
  /**
   * Legacy (0.x frame API) metadata of an index — frame options, index time quantum, input
   * definitions — as opaque JSON under a key (src/service/legacy owns the meaning); null deletes.
   */
  | { type: 'LegacyMetaSet'; index: string; key: string; value: string | null }
  /**
   * Cluster mode (src/cluster): a command of NAME.meta or NAME.log applied here — the offset of its
   * last message, the stored position a consumer resumes from after it (cluster/commands/position.ts)
   * and the time its coordinator stamped on it. It closes the commit of the command's events,
   * so a replay knows which command each record came from (time-travel reads), and a snapshot
   * carries each partition's position and newest time (cluster backups). A partition installed
   * from another holder's snapshot is marked with an empty `offset` and the snapshot's newest
   * time: a time-travel read before it cannot be answered from this node's log.
   */
  | { type: 'CommandApplied'; topic: string; partition: number; offset: string; position: string; timeMs: number };

export type EventType = Event['type'];

/**
 * Where write deciders put their events. The engine's implementation applies each event to the
 * state at once (so later calls of the same request see it) and stages it for the log; the
 * request is acknowledged only after the staged group is durable.
 */
export interface EventSink {
  emit(event: Event): void;
}
