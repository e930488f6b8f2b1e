// Import requests after decoding (protobuf, JSON or Kafka records): column-major typed arrays,
// no per-bit objects.
import type { IdArray, WideIdArray } from '../../domain/id-array.js';

export interface BitsImport {
  index: string;
  field: string;
  /** The shard the client named; every column ID must lie in it (ignored with column keys). */
  shard?: number;
  rowIds: IdArray;
  /** Column IDs: wide (BigUint64Array) only when one is above 2^53−1. */
  columnIds: WideIdArray;
  /** Nanoseconds since the epoch; 0 = no timestamp. */
  timestamps: BigInt64Array | null;
  rowKeys: string[];
  columnKeys: string[];
  clear: boolean;
  /** The client's protobuf body this was decoded from: cluster mode forwards it as it is. */
  encoded?: Uint8Array;
}

export interface ValuesImport {
  index: string;
  field: string;
  shard?: number;
  /** Column IDs: wide (BigUint64Array) only when one is above 2^53−1. */
  columnIds: WideIdArray;
  values: BigInt64Array;
  columnKeys: string[];
  clear: boolean;
  /** The client's protobuf body this was decoded from: cluster mode forwards it as it is. */
  encoded?: Uint8Array;
}

export interface RoaringImport {
  index: string;
  field: string;
  shard: number;
  clear: boolean;
  /** Full view names (`standard`, `standard_2018…`) with Pilosa roaring (or official roaring) data. */
  views: { view: string; data: Uint8Array }[];
}
