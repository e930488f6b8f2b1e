// What the log and the engine know of one event type, in one entry per type (the tables of
// events/registry.ts): its type byte, its record encoding and how replay and snapshot
// composition treat it, and how it changes the state (events/apply.ts dispatches to it). Each
// family file of events/kinds/ declares its events' shapes beside their entries; events/types.ts
// gathers the shapes into the Event union.
import type { Holder } from '../state/holder.js';

/** An event of some family: a past-tense fact named by its `type`. */
export interface NamedEvent {
  type: string;
}

/**
 * Replay (engine/replay-coalescer.ts): `merge` — small ones are merged with their kind before
 * being applied (bit sets, int values); `commutes` — touches no bits and no values, so it is
 * applied at once, ahead of what is pending; `barrier` — everything pending is applied first.
 */
export type ReplayRole = 'merge' | 'commutes' | 'barrier';

/**
 * Where a snapshot carries it (events/state-events.ts writes it; engine/compose-base.ts composes a
 * cluster restore's base from parts of several snapshots): `global` — schema, keys, attributes
 * and ingests, the state NAME.meta carries; `shard` — belongs to the shards of one partition;
 * `mark` — a partition's position; `never` — only in the log.
 */
export type SnapshotRole = 'global' | 'shard' | 'mark' | 'never';

export interface EventKind<E extends NamedEvent> {
  /** The record's type byte: append-only, never reused or renumbered. */
  readonly code: number;
  encode(e: E): Uint8Array;
  /**
   * `reuse` (replay only): the event may carry scratch arrays that the next decode overwrites,
   * so it must be applied before the next is decoded.
   */
  decode(payload: Uint8Array, reuse: boolean): E;
  /** The event's change to the state: the only code that mutates it (called through events/apply.ts). */
  apply(holder: Holder, event: E): void;
  readonly replay: ReplayRole;
  readonly snapshot: SnapshotRole;
}

/** The entries of one family's events (each kinds/ file gives one), one per type of `E`. */
export type EventKinds<E extends NamedEvent> = { readonly [T in E['type']]: EventKind<Extract<E, { type: T }>> };
