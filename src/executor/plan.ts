// Compiled read calls. Compiling a call validates it completely against the schema (names,
// field types, argument types and ranges), so executing a plan can only fail on a broken
// invariant. Plans hold Field objects, not names; row and column keys stay keys until execution
// (a write earlier in the same request may assign them).
import type { ColumnId } from '../domain/shard.js';
import type { BsiPredicate } from '../state/bsi.js';
import type { Value } from '../pql/ast.js';
import type { ReadonlyField } from '../state/readonly.js';

/**
 * A row or column named by ID (a number), or by a key (a string) that is translated when the plan
 * runs. Unboxed: a wrapper object would be allocated for every Row() of every query.
 */
export type Ref = number | string;

/** A column reference: as Ref, with a bigint for a column literal above 2^53 − 1. */
export type ColRef = ColumnId | string;

export type BitmapPlan =
  /** A row of the standard view. */
  | { kind: 'row'; field: ReadonlyField; row: Ref; view?: string }
  /** A row over the time views that cover [from, to) (Row with from/to, legacy Range). */
  | { kind: 'timeRow'; field: ReadonlyField; row: Ref; from: number; to: number }
  /** A BSI comparison on an int field. */
  | { kind: 'bsi'; field: ReadonlyField; pred: BsiPredicate }
  | { kind: 'empty' }
  | { kind: 'union' | 'intersect' | 'difference' | 'xor'; children: BitmapPlan[] }
  /** `_exists` row 0 minus the child. */
  | { kind: 'not'; child: BitmapPlan }
  /** Every column + n (n < 2^53). */
  | { kind: 'shift'; child: BitmapPlan; n: number };

/** Rows(): also the children of GroupBy. */
export interface RowsSpec {
  field: ReadonlyField;
  previous?: Ref;
  limit?: number;
  column?: ColRef;
  /** Time fields: read the time views covering [from, to) (each end optional). */
  time?: { from?: number; to?: number };
}

export interface TopNPlan {
  kind: 'topN';
  field: ReadonlyField;
  /** 0 = all */
  n: number;
  src?: BitmapPlan;
  ids?: number[];
  threshold: number;
  tanimoto: number;
  attrName?: string;
  attrValues?: Value[];
  /** 0.x TopN(inverse=true): rank the inverse view's rows (columns), every one a candidate. */
  view?: string;
}

export interface OptionSettings {
  shards?: number[];
  columnAttrs?: boolean;
  excludeColumns?: boolean;
  excludeRowAttrs?: boolean;
}

export type ReadPlan =
  /** A bitmap call at top level; `attrs` names the row whose attributes a plain Row() returns. */
  | { kind: 'bitmap'; plan: BitmapPlan; attrs?: { field: ReadonlyField; row: Ref } }
  | { kind: 'count'; child: BitmapPlan }
  | { kind: 'valCount'; op: 'sum' | 'min' | 'max'; field: ReadonlyField; filter?: BitmapPlan }
  | { kind: 'minMaxRow'; op: 'min' | 'max'; field: ReadonlyField; filter?: BitmapPlan }
  | TopNPlan
  | { kind: 'rows'; spec: RowsSpec }
  | { kind: 'groupBy'; children: RowsSpec[]; limit?: number; offset?: number; filter?: BitmapPlan }
  | { kind: 'options'; settings: OptionSettings; child: ReadPlan };
