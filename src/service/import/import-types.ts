// Import requests after decoding (protobuf, JSON or Kafka records): column-major typed arrays,
// no per-bit objects.
import type { IdArray, WideIdArray } from '../../domain/id-array.js';
import type { ReadonlyField, ReadonlyIndex } from '../../state/readonly.js';

/**
 * What validating a bits import and building its events read of its index and field: names and
 * options, plain data, so a worker thread can be given a copy (cluster/commands/import-prepare-thread.ts).
 */
export type ImportIndex = Pick<ReadonlyIndex, 'name' | 'options'>;
export type ImportField = Pick<ReadonlyField, 'name' | 'options'>;

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
  /** Cluster mode: the meta offset the command was sent at; the field's options as of it (field-as-of.ts). */
  metaOffset?: string;
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
}

export interface RoaringImport {
  index: string;
  field: string;
  shard: number;
  clear: boolean;
  /** Full view names (`standard`, `standard_2018…`) with Pilosa roaring (or official roaring) data. */
  views: { view: string; data: Uint8Array }[];
  /** Cluster mode: the meta offset the command was sent at; the field's options as of it (field-as-of.ts). */
  metaOffset?: string;
}

/** A client's protobuf import body, named by its header only (encoding/import-request.ts peekImportHeader). */
export interface ProtobufImport {
  index: string;
  field: string;
  shard: number;
  clear: boolean;
  /** Bits (ImportRequest) or int values (ImportValueRequest), by the field's type. */
  format: 'bits' | 'values';
  encoded: Uint8Array;
}

/**
 * An import service that can send a client's protobuf body on without decoding it (cluster mode:
 * the holders decode and validate it as they apply it). False: it cannot take this one as it is
 * (keys to translate), and the route decodes it and calls importBits/importValues.
 */
export interface ProtobufForwarder {
  forwardProtobuf(req: ProtobufImport): Promise<boolean>;
}
