// Query results, independent of the wire encoding (JSON or protobuf: see src/encoding/).
import type { ColumnId } from '../domain/shard.js';
import type { AttrMap } from '../domain/types.js';
import type { ShardColumns } from './shard-columns.js';

export interface PairResult {
  id: number;
  key?: string;
  count: number;
}

export interface FieldRow {
  field: string;
  rowID?: number;
  rowKey?: string;
}

/** A row's columns: an array, or (large answers) the shards' offsets off the JS heap. */
export type RowColumns = ColumnId[] | ShardColumns;

export type QueryResult =
  /** Row-like results. `keys` present (and columns empty) on an index with keys. */
  | { type: 'row'; columns: RowColumns; keys?: string[]; attrs: AttrMap }
  /** Count */
  | { type: 'count'; n: number }
  /** Set, Clear, ClearRow, Store */
  | { type: 'changed'; changed: boolean }
  /** TopN */
  | { type: 'pairs'; pairs: PairResult[] }
  /** Sum, Min, Max */
  | { type: 'valcount'; value: bigint; count: number }
  /** SetRowAttrs, SetColumnAttrs */
  | { type: 'null' }
  /** GroupBy */
  | { type: 'groupcounts'; groups: { group: FieldRow[]; count: number }[] }
  /** Rows. `keys` present (rows null in JSON) on a field with keys. */
  | { type: 'rowids'; rows: number[]; keys?: string[] }
  /** MinRow, MaxRow */
  | { type: 'pair'; pair: PairResult };

export interface ColumnAttrSet {
  id?: number;
  key?: string;
  attrs: AttrMap;
}

export interface QueryResponse {
  results: QueryResult[];
  /** Present only when requested with columnAttrs=true and non-empty. */
  columnAttrs?: ColumnAttrSet[];
}

export interface QueryOptions {
  /** Restrict execution to these shards (undefined = all shards of the index). */
  shards?: number[];
  columnAttrs: boolean;
  excludeColumns: boolean;
  excludeRowAttrs: boolean;
  /** Rows, groups or pairs one Rows/GroupBy/TopN may return (--max-result-rows); unset: no bound. */
  maxResultRows?: number;
  /** Bytes one answer may take (--max-result-bytes); unset or 0: no bound. */
  maxResultBytes?: number;
  /** Bytes of bitmaps one call may build at once in one shard (--max-query-memory); 0: none. */
  maxQueryMemory?: number;
  /**
   * Cluster mode: the meta offset the log command was sent at. Its writes take each field's
   * options as of it (state/field-as-of.ts), not as of this holder's meta position.
   */
  metaOffset?: string;
}
