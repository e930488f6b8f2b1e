// Schema listings in Pilosa 1.4's exact shapes and key order (docs/API.md §1.4).
import { EXISTS_FIELD } from '../domain/names.js';
import { SHARD_WIDTH } from '../domain/shard.js';
import type { ReadonlyField, ReadonlyHolder, ReadonlyIndex } from '../state/readonly.js';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [k: string]: JsonValue };

/** Big int64 bounds are emitted as JSON numbers with every digit (see src/http/json-reply.ts). */
export class RawNumber {
  constructor(readonly text: string) {}
}
export type JsonOut = JsonValue | RawNumber | JsonOut[] | { [k: string]: JsonOut };

/**
 * Bit depths that override the fields' own, keyed `index/field` (bitDepthKey): in cluster mode an
 * int field's depth is the largest any member has seen, since each holds only some shards' values.
 */
export type BitDepths = ReadonlyMap<string, number>;

export const bitDepthKey = (index: string, field: string): string => `${index}/${field}`;

export function fieldOptionsJson(f: ReadonlyField, depth: number = f.bitDepth): { [k: string]: JsonOut } {
  const o = f.options;
  switch (o.type) {
    case 'set':
    case 'mutex':
      return { type: o.type, cacheType: o.cacheType, cacheSize: o.cacheSize, keys: o.keys };
    case 'int':
      return { type: 'int', base: num(f.base), bitDepth: depth, min: num(o.min), max: num(o.max), keys: o.keys };
    case 'time':
      return { type: 'time', timeQuantum: o.timeQuantum, keys: o.keys, noStandardView: o.noStandardView };
    case 'bool':
      return { type: 'bool' };
  }
}

export function indexJson(index: ReadonlyIndex, depths?: BitDepths): { [k: string]: JsonOut } {
  const fields = [...index.fields.values()]
    .filter((f) => f.name !== EXISTS_FIELD)
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((f) => ({
      name: f.name,
      options: fieldOptionsJson(f, Math.max(f.bitDepth, depths?.get(bitDepthKey(index.name, f.name)) ?? 0)),
    }));
  return {
    name: index.name,
    options: { keys: index.options.keys, trackExistence: index.options.trackExistence },
    fields: fields.length === 0 ? null : fields,
    shardWidth: SHARD_WIDTH,
  };
}

export function schemaJson(holder: ReadonlyHolder, depths?: BitDepths): { indexes: JsonOut } {
  const list = holder.sortedIndexes().map((i) => indexJson(i, depths));
  return { indexes: list.length === 0 ? null : list };
}

function num(b: bigint): number | RawNumber {
  return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(b)
    : new RawNumber(b.toString());
}

/** Every int field's own bit depth (what this node has seen), for a cluster's listing. */
export function localBitDepths(holder: ReadonlyHolder): Record<string, number> {
  const out: Record<string, number> = {};
  for (const index of holder.sortedIndexes())
    for (const f of index.fields.values())
      if (f.options.type === 'int') out[bitDepthKey(index.name, f.name)] = f.bitDepth;
  return out;
}
