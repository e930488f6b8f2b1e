// The commands of the cluster's topics (docs/CLUSTER.md, "Topics and commands"): what a
// coordinator asks every holder to run, never the events it causes. Meta commands (schema, keys,
// attributes) go to NAME.meta; log commands (PQL writes, imports) to the partition of their
// shards, with the meta offset their writer had applied. The wire form is in command-codec.ts.
import type { FieldOptions, IndexOptions } from '../../domain/types.js';
import type { IngestSpec } from '../../kafka/ingest-spec.js';
import type { FrameIntField, FrameOptionsInput } from '../../service/legacy/frame-options.js';

export type SchemaOp =
  | { op: 'createIndex'; index: string; options: IndexOptions }
  | { op: 'deleteIndex'; index: string }
  | {
      op: 'createField';
      index: string;
      field: string;
      options: FieldOptions;
      extraIntFields: { name: string; options: FieldOptions }[];
    }
  | { op: 'deleteField'; index: string; field: string }
  | {
      op: 'applySchema';
      indexes: { name: string; options: IndexOptions; fields: { name: string; options: FieldOptions }[] }[];
    };

/** 0.x frame writes (service/legacy/frame-service.ts), one FrameService use case each. */
export type FrameOp =
  | {
      op: 'createLegacyIndex';
      index: string;
      options: IndexOptions;
      legacy: { columnLabel?: string; timeQuantum?: string };
    }
  | { op: 'createFrame'; index: string; frame: string; input: FrameOptionsInput }
  | { op: 'deleteFrame'; index: string; frame: string }
  | { op: 'setIndexTimeQuantum'; index: string; quantum: string }
  | { op: 'setFrameTimeQuantum'; index: string; frame: string; quantum: string }
  | { op: 'createFrameField'; index: string; frame: string; field: FrameIntField }
  | { op: 'deleteFrameField'; index: string; frame: string; name: string }
  /** 0.x input definitions (service/legacy/input-service.ts): the body as the client sent it. */
  | { op: 'defineInput'; index: string; name: string; body: unknown }
  | { op: 'deleteInput'; index: string; name: string };

export type MetaCommand =
  | { kind: 'schema'; schema: SchemaOp }
  | { kind: 'frame'; frame: FrameOp }
  /** Keys to translate: the index's column keys, and row keys per field (new ones get IDs). */
  | { kind: 'keys'; index: string; columns: string[]; rows: { field: string; keys: string[] }[] }
  /** SetRowAttrs/SetColumnAttrs calls (PQL text, keys already translated by an earlier command). */
  | { kind: 'attrs'; index: string; pql: string }
  /** A Kafka-fed ingest (src/cluster/ingest) defined, deleted, started or stopped on every node. */
  | { kind: 'ingest'; op: 'define' | 'delete' | 'start' | 'stop'; name: string; spec?: IngestSpec }
  /**
   * One batch of an ingest: the source offsets it consumed and its counts, in the Kafka
   * transaction of the batch's log commands (so every node counts each record exactly once).
   */
  | {
      kind: 'ingestOffsets';
      name: string;
      topic: string;
      partitions: number[];
      offsets: string[];
      records: number;
      deadLettered: number;
    };

export type ImportFormat = 'bits' | 'values' | 'roaring';

export type LogCommand =
  | {
      kind: 'pql';
      index: string;
      /** The write calls of this partition, in request order (each call's own source text). */
      pql: string;
      /** The request's `shards` argument, when it named some. */
      shards?: number[];
      partition: number;
      /** The writer's meta position (next offset): a holder applies this only once it has as much. */
      metaOffset: string;
      /** The coordinator's --legacy-release ('' or absent: every 0.x spelling), for 0.x calls. */
      release?: string;
    }
  | {
      kind: 'import';
      index: string;
      field: string;
      shard: number;
      format: ImportFormat;
      clear: boolean;
      /** roaring: the view names, one per body part (bits/values: one protobuf request). */
      views?: string[];
      /** Body bytes: an ImportRequest/ImportValueRequest, or the roaring views one after another. */
      body: Uint8Array;
      /** Byte length of each view's data in `body` (roaring only). */
      viewBytes?: number[];
      partition: number;
      metaOffset: string;
    };

/**
 * What every command carries besides its kind: the coordinator's clock when it sent it (ms since
 * the epoch; ClusterWrites stamps it, never before the newest meta command it had applied). It is
 * the command's commit time (atTime reads, restores to a time) and the "now" of anything a holder
 * would otherwise take from its own clock (a time range's default end is now + 1 day), so applying
 * a command depends on the command and the partition's state alone. Absent in commands written
 * before it existed (format version 1): the applier then uses the Kafka message's timestamp.
 */
export interface Stamp {
  time?: number;
}

export type Command = (MetaCommand | LogCommand) & Stamp;

/** The per-command outcome a holder keeps for the coordinator (GET /internal/cluster/result). */
export type CommandResult =
  | { ok: true; value: unknown }
  /** A DomainError: every holder fails the command the same way; the status and text go back. */
  | { ok: false; status: number; code: string; message: string };
