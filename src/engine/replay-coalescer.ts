// Replay applies the log through apply(), but not one small record at a time: the bulk of a
// long log is Set()/SetValue() records of a few bits each, and inserting a handful of random
// offsets into a row costs a sorted-array insert (a memmove) per offset. Consecutive records that
// commute are merged instead — bit sets with bit sets, int values of one (field, shard) in order
// — and applied as one event per (field, view, shard), whose rows then change by container-level
// unions. Anything else (clears, schema, keys, attrs, …) first flushes what is pending, so the
// state after every flush is exactly the state sequential replay reaches at that point.
import { BSI_VIEW_PREFIX } from '../domain/names.js';
import { EVENT_KINDS } from '../events/registry.js';
import type { Event } from '../events/types.js';
import { apply } from '../events/apply.js';
import type { Holder } from '../state/holder.js';

type BitsSet = Extract<Event, { type: 'BitsSet' }>;
type ValuesSet = Extract<Event, { type: 'ValuesSet' }>;

interface PendingBits {
  event: Omit<BitsSet, 'rows' | 'columns'>;
  rows: Map<number, number[]>;
}

interface PendingValues {
  event: Omit<ValuesSet, 'columns' | 'values'>;
  // Typed and grown by copying: no bigint is materialized per merged value.
  columns: Uint32Array;
  values: BigInt64Array;
  n: number;
}

/** Records merged before a flush: bounds the memory held back (a few MB). */
const WINDOW = 200_000;
/** Bigger records gain nothing from merging (they already change rows in bulk). */
const MAX_MERGED_ITEMS = 64;

export class ReplayCoalescer {
  /** By index\0field\0view, then by shard·2 + exists; the last group is remembered. */
  private readonly bits = new Map<string, Map<number, PendingBits>>();
  private last: { index: string; field: string; view: string; groups: Map<number, PendingBits> } | undefined;
  private readonly values = new Map<string, PendingValues>();
  private pending = 0;

  constructor(private readonly holder: Holder) {}

  /** Takes `e` (whose arrays may be scratch reused by the next decode: copied, never kept). */
  add(e: Event): void {
    if (e.type === 'BitsSet' && !e.view.startsWith(BSI_VIEW_PREFIX)) {
      // Bit sets commute with bit sets and with int values (which live in bsig_ views): a big
      // one is applied at once, ahead of the pending small ones, with the same final state.
      if (!this.mergeBits(e)) apply(this.holder, e);
    } else if (e.type === 'ValuesSet') {
      const key = `${e.index}\0${e.field}\0${e.shard}`;
      if (e.columns.length > MAX_MERGED_ITEMS) {
        // The last value of a column wins: earlier pending values of this shard go first.
        this.flushValues(key);
        apply(this.holder, e);
      } else this.mergeValues(key, e);
    } else {
      // Events that touch no bits and no values commute with everything pending.
      if (EVENT_KINDS[e.type].replay !== 'commutes') this.flush();
      apply(this.holder, e);
      return;
    }
    if (++this.pending >= WINDOW) this.flush();
  }

  /** Applies everything pending. */
  flush(): void {
    for (const groups of this.bits.values()) {
      for (const p of groups.values()) {
        const rows: number[] = [];
        const columns: Uint32Array[] = [];
        for (const [row, offsets] of p.rows) {
          rows.push(row);
          columns.push(Uint32Array.from(offsets).sort());
        }
        apply(this.holder, { ...p.event, rows, columns });
      }
    }
    this.bits.clear();
    this.last = undefined;
    for (const key of [...this.values.keys()]) this.flushValues(key);
    this.pending = 0;
  }

  private mergeBits(e: BitsSet): boolean {
    let items = 0;
    for (const c of e.columns) {
      if (!(c instanceof Uint32Array)) return false;
      items += c.length;
    }
    if (items > MAX_MERGED_ITEMS) return false;
    const exists = e.exists === true;
    const groups = this.groupsOf(e);
    const slot = 2 * e.shard + (exists ? 1 : 0);
    let p = groups.get(slot);
    if (p === undefined) {
      const event: PendingBits['event'] = {
        type: 'BitsSet',
        index: e.index,
        field: e.field,
        view: e.view,
        shard: e.shard,
        ...(exists ? { exists } : {}),
      };
      p = { event, rows: new Map() };
      groups.set(slot, p);
    }
    for (let i = 0; i < e.rows.length; i++) {
      let list = p.rows.get(e.rows[i]);
      if (list === undefined) p.rows.set(e.rows[i], (list = []));
      const c = e.columns[i] as Uint32Array;
      for (let k = 0; k < c.length; k++) list.push(c[k]);
    }
    return true;
  }

  /** Decoded names repeat as the same string objects, so the common case is three === tests. */
  private groupsOf(e: BitsSet): Map<number, PendingBits> {
    const l = this.last;
    if (l !== undefined && l.index === e.index && l.field === e.field && l.view === e.view) return l.groups;
    const key = `${e.index}\0${e.field}\0${e.view}`;
    let groups = this.bits.get(key);
    if (groups === undefined) this.bits.set(key, (groups = new Map()));
    this.last = { index: e.index, field: e.field, view: e.view, groups };
    return groups;
  }

  private mergeValues(key: string, e: ValuesSet): void {
    let p = this.values.get(key);
    if (p === undefined) {
      p = {
        event: { type: 'ValuesSet', index: e.index, field: e.field, shard: e.shard },
        columns: new Uint32Array(16),
        values: new BigInt64Array(16),
        n: 0,
      };
      this.values.set(key, p);
    }
    const need = p.n + e.columns.length;
    if (need > p.columns.length) {
      const size = Math.max(need, 2 * p.columns.length);
      const columns = new Uint32Array(size);
      const values = new BigInt64Array(size);
      columns.set(p.columns.subarray(0, p.n));
      values.set(p.values.subarray(0, p.n));
      p.columns = columns;
      p.values = values;
    }
    p.columns.set(e.columns, p.n);
    p.values.set(e.values, p.n);
    p.n = need;
  }

  private flushValues(key: string): void {
    const p = this.values.get(key);
    if (p === undefined) return;
    this.values.delete(key);
    // In record order: setValues keeps the last value of a repeated column, as replay would.
    apply(this.holder, { ...p.event, columns: p.columns.subarray(0, p.n), values: p.values.subarray(0, p.n) });
  }
}
