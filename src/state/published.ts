// The state as the engine publishes it to query worker threads (engine/frozen-feed.ts →
// service/query-workers/): each durable write group's changed rows as frozen bytes in shared
// memory, and the layout (indexes, fields, views, shards) when it changed. Everything here is
// structured-cloneable; the SharedArrayBuffers travel by reference, never copied.
import type { FieldOptions, IndexOptions } from '../domain/types.js';

/** One row's frozen bytes: buf[at, at + len), `at` 32-byte aligned; `size` its bit count (−1 unknown). */
export interface RowImage {
  row: number;
  buf: SharedArrayBuffer;
  at: number;
  len: number;
  size: number;
}

/** A row's bits set and cleared by one write group (a few: a point write does not re-send the row). */
export interface RowPatch {
  row: number;
  set: Uint32Array;
  cleared: Uint32Array;
}

/**
 * The rows of one fragment that changed: new bytes, patches, or gone. `replace`: the images are
 * all its rows.
 */
export interface FragmentDelta {
  index: string;
  field: string;
  view: string;
  shard: number;
  set: RowImage[];
  patched: RowPatch[];
  removed: number[];
  replace: boolean;
}

export interface FieldLayout {
  name: string;
  options: FieldOptions;
  bitDepth: number;
  /** View name → its shards. */
  views: [string, number[]][];
}

export interface IndexLayout {
  name: string;
  options: IndexOptions;
  fields: FieldLayout[];
}

/** The state's shape after sequence `seq`; rows of fragments no longer in it are dropped. */
export interface Publication {
  seq: number;
  layout?: IndexLayout[];
  fragments: FragmentDelta[];
}
