// The state as everything outside the engine sees it: read-only views of the holder, its
// indexes, fields, views, fragments and key maps. Deciders (Engine.commit), reads and
// peekApplied get a ReadonlyHolder, so that only apply() — which the engine calls — can change
// the state: a decider that tried to would not compile. The classes implement these views.
import type { AttrMap, FieldOptions, IndexOptions } from '../domain/types.js';
import type { Fragment } from './fragment.js';
import type { CommandMark } from './holder.js';
import type { KeyTranslator } from './keys.js';

/**
 * A fragment's reads. `load()` adopts rows a snapshot deferred, which any read does on first
 * touch anyway: it changes how rows are held, not what they are.
 */
export type ReadonlyFragment = Pick<
  Fragment,
  | 'shard'
  | 'rows'
  | 'deferred'
  | 'load'
  | 'rowCount'
  | 'packedCount'
  | 'hasRow'
  | 'row'
  | 'peekRow'
  | 'rowSizes'
  | 'footprint'
  | 'captureRow'
  | 'viewedRows'
  | 'packedIds'
  | 'rowKeys'
  | 'version'
  | 'rowSize'
  | 'countWith'
  | 'has'
  | 'rowIds'
  | 'isEmpty'
>;

export type ReadonlyKeyTranslator = Pick<KeyTranslator, 'nextId' | 'size' | 'id' | 'key' | 'entries'>;

export interface ReadonlyView {
  readonly name: string;
  readonly fragments: ReadonlyMap<number, ReadonlyFragment>;
  fragment(shard: number): ReadonlyFragment | undefined;
}

export interface ReadonlyField {
  readonly name: string;
  /** Cluster mode: offset in NAME.meta of the command that created it. */
  readonly incarnation?: string;
  readonly options: Readonly<FieldOptions>;
  /** Cluster mode: the options before each change by a meta command (Field.priorOptions). */
  readonly priorOptions: readonly { readonly until: string; readonly options: Readonly<FieldOptions> }[];
  /** The options a command sent at that meta offset saw (Field.optionsAt). */
  optionsAt(metaOffset: string | undefined): Readonly<FieldOptions>;
  readonly views: ReadonlyMap<string, ReadonlyView>;
  readonly rowAttrs: ReadonlyMap<number, AttrMap>;
  readonly bitDepth: number;
  readonly base: bigint;
  view(name: string): ReadonlyView | undefined;
}

export interface ReadonlyIndex {
  readonly name: string;
  /** Cluster mode: offset in NAME.meta of the command that created it. */
  readonly incarnation?: string;
  readonly options: Readonly<IndexOptions>;
  readonly fields: ReadonlyMap<string, ReadonlyField>;
  readonly columnAttrs: ReadonlyMap<number, AttrMap>;
  readonly columnKeys: ReadonlyKeyTranslator;
  readonly rowKeys: ReadonlyMap<string, ReadonlyKeyTranslator>;
  readonly legacyMeta: ReadonlyMap<string, string>;
  readonly existence: ReadonlyField | undefined;
  field(name: string): ReadonlyField | undefined;
  shards(): readonly number[];
}

export interface ReadonlyIngestState {
  readonly spec: string;
  readonly paused: boolean;
  readonly offsets: ReadonlyMap<string, ReadonlyMap<number, string>>;
  readonly records: number;
  readonly deadLettered: number;
}

export interface ReadonlyHolder {
  readonly indexes: ReadonlyMap<string, ReadonlyIndex>;
  readonly ingests: ReadonlyMap<string, ReadonlyIngestState>;
  /** Cluster mode: where this node stands in each partition of the cluster's topics. */
  readonly commandMarks: ReadonlyMap<string, Readonly<CommandMark>>;
  /** Sequence of the last event applied (0 = empty log): the state's version. */
  readonly appliedSeq: number;
  index(name: string): ReadonlyIndex | undefined;
  sortedIndexes(): ReadonlyIndex[];
}
