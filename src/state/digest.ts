// A canonical hash of the whole state, independent of insertion order: used to prove that live
// state, replayed state, snapshot + suffix, and a Kafka replica are the same.
import { createHash } from 'node:crypto';
import type { AttrMap } from '../domain/types.js';
import type { Holder } from './holder.js';
import type { KeyTranslator } from './keys.js';

const byName = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function stateDigest(holder: Holder): string {
  const h = createHash('sha256');
  const put = (s: string): void => {
    h.update(s);
    h.update('\n');
  };
  for (const index of holder.sortedIndexes()) {
    put(`index ${index.name} ${JSON.stringify(index.options)}`);
    putKeys(put, 'columns', index.columnKeys);
    putAttrs(put, 'column', index.columnAttrs);
    for (const field of [...index.fields.values()].sort(byName)) {
      const o = field.options;
      put(`field ${field.name} ${o.type} ${o.cacheType} ${o.cacheSize} ${o.keys} ${o.min} ${o.max} ${o.timeQuantum} ${o.noStandardView} depth=${field.bitDepth}`);
      const rk = index.rowKeys.get(field.name);
      if (rk) putKeys(put, 'rows', rk);
      putAttrs(put, 'row', field.rowAttrs);
      for (const view of [...field.views.values()].sort(byName)) {
        for (const shard of [...view.fragments.keys()].sort((a, b) => a - b)) {
          const frag = view.fragments.get(shard)!;
          for (const row of frag.rowIds()) {
            put(`bits ${view.name} ${shard} ${row}`);
            // The bits, not their containers: a run-optimized row and its array form are equal.
            const bits = frag.rows.get(row)!.toUint32Array();
            h.update(new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength));
          }
        }
      }
    }
  }
  return h.digest('hex');
}

function putKeys(put: (s: string) => void, what: string, t: KeyTranslator): void {
  for (let id = 1; id < t.nextId; id++) put(`key ${what} ${id} ${JSON.stringify(t.key(id))}`);
}

function putAttrs(put: (s: string) => void, what: string, attrs: Map<number, AttrMap>): void {
  for (const id of [...attrs.keys()].sort((a, b) => a - b)) {
    const a = attrs.get(id)!;
    put(`attrs ${what} ${id} ${Object.keys(a).sort().map((k) => `${k}=${typeof a[k]}:${String(a[k])}`).join(',')}`);
  }
}
