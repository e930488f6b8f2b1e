// The JSON forms of partial results and phase-one answers (partial.ts), as one node sends them
// to another. Numbers stay numbers where they are exact; 64-bit columns and BSI values are
// decimal strings. Decoding checks the shape: a peer on another version must fail loudly, not
// merge into a wrong answer.
import type { ColumnId } from '../domain/shard.js';
import type { Group } from './group-by.js';
import type { CallPartial, CallPrep } from './partial.js';
import { columnArray } from './shard-columns.js';

export type WirePrep =
  | { kind: 'none' }
  | { kind: 'topN'; candidates: number[] }
  | { kind: 'groupBy'; allowed: (number[] | null)[] };

export type WirePartial =
  | { kind: 'columns'; columns: (number | string)[] }
  | { kind: 'count'; n: number }
  | { kind: 'valCount'; acc: { value: string; count: number } | null }
  | { kind: 'best'; best: { id: number; count: number } | null }
  /** rows: [id, count, size] */
  | { kind: 'topN'; rows: [number, number, number][]; srcCount: number }
  | { kind: 'rows'; ids: number[] }
  | { kind: 'groups'; groups: [number[], number][] };

export function encodePrep(p: CallPrep): WirePrep {
  if (p.kind === 'groupBy') return { kind: 'groupBy', allowed: p.allowed.map((a) => a ?? null) };
  return p;
}

export function encodePartial(p: CallPartial): WirePartial {
  switch (p.kind) {
    case 'columns':
      return {
        kind: 'columns',
        columns: columnArray(p.columns).map((c) => (typeof c === 'bigint' ? c.toString() : c)),
      };
    case 'valCount':
      return {
        kind: 'valCount',
        acc: p.acc === undefined ? null : { value: p.acc.value.toString(), count: p.acc.count },
      };
    case 'best':
      return { kind: 'best', best: p.best ?? null };
    case 'topN': {
      const rows: [number, number, number][] = [];
      for (const [id, count] of p.counts.counts) rows.push([id, count, p.counts.sizes.get(id) ?? 0]);
      return { kind: 'topN', rows, srcCount: p.counts.srcCount };
    }
    case 'groups':
      return { kind: 'groups', groups: p.groups.map((g): [number[], number] => [g.ids, g.count]) };
    default:
      return p;
  }
}

export class WireError extends Error {
  override name = 'WireError';
}

export function decodePrep(v: unknown): CallPrep {
  const o = record(v);
  switch (o.kind) {
    case 'none':
      return { kind: 'none' };
    case 'topN':
      return { kind: 'topN', candidates: ints(o.candidates) };
    case 'groupBy':
      return { kind: 'groupBy', allowed: array(o.allowed).map((a) => (a === null ? undefined : ints(a))) };
    default:
      throw new WireError(`unknown phase-one kind ${String(o.kind)}`);
  }
}

export function decodePartial(v: unknown): CallPartial {
  const o = record(v);
  switch (o.kind) {
    case 'columns':
      return { kind: 'columns', columns: array(o.columns).map(column) };
    case 'count':
      return { kind: 'count', n: int(o.n) };
    case 'valCount': {
      if (o.acc === null) return { kind: 'valCount', acc: undefined };
      const a = record(o.acc);
      return { kind: 'valCount', acc: { value: bigintOf(a.value), count: int(a.count) } };
    }
    case 'best': {
      if (o.best === null) return { kind: 'best', best: undefined };
      const b = record(o.best);
      return { kind: 'best', best: { id: int(b.id), count: int(b.count) } };
    }
    case 'topN': {
      const counts = new Map<number, number>();
      const sizes = new Map<number, number>();
      for (const r of array(o.rows)) {
        const [id, count, size] = ints(r);
        counts.set(id, count);
        sizes.set(id, size);
      }
      return { kind: 'topN', counts: { counts, sizes, srcCount: int(o.srcCount) } };
    }
    case 'rows':
      return { kind: 'rows', ids: ints(o.ids) };
    case 'groups':
      return {
        kind: 'groups',
        groups: array(o.groups).map((g): Group => {
          const [ids, count] = array(g);
          return { ids: ints(ids), count: int(count) };
        }),
      };
    default:
      throw new WireError(`unknown partial kind ${String(o.kind)}`);
  }
}

function record(v: unknown): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new WireError('expected an object');
  return v as Record<string, unknown>;
}

function array(v: unknown): unknown[] {
  if (!Array.isArray(v)) throw new WireError('expected an array');
  return v;
}

function int(v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new WireError('expected an integer');
  return v;
}

function ints(v: unknown): number[] {
  return array(v).map(int);
}

function bigintOf(v: unknown): bigint {
  if (typeof v !== 'string' || !/^-?\d+$/.test(v)) throw new WireError('expected a decimal string');
  return BigInt(v);
}

function column(v: unknown): ColumnId {
  return typeof v === 'string' ? bigintOf(v) : int(v);
}
