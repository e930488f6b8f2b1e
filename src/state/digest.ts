// A canonical hash of the whole state, independent of insertion order: used to prove that live
// state, replayed state, snapshot + suffix, and a Kafka replica are the same. It covers all the
// holder holds (schema, bits, keys, attributes, legacy metadata, Kafka ingests and their offsets)
// except appliedSeq; test/unit/state/digest.test.ts shows each event type changes it.
import { createHash } from 'node:crypto';
import type { AttrMap } from '../domain/types.js';
import type { ReadonlyHolder, ReadonlyKeyTranslator } from './readonly.js';

const byName = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function stateDigest(holder: ReadonlyHolder): string {
  const h = createHash('sha256');
  const put = (s: string): void => {
    h.update(s);
    h.update('\n');
  };
  for (const index of holder.sortedIndexes()) {
    put(`index ${index.name} ${sortedEntries(index.options)} @${index.incarnation ?? ''}`);
    putKeys(put, 'columns', index.columnKeys);
    putAttrs(put, 'column', index.columnAttrs);
    for (const field of [...index.fields.values()].sort(byName)) {
      put(`field ${field.name} ${sortedEntries(field.options)} depth=${field.bitDepth} @${field.incarnation ?? ''}`);
      for (const p of field.priorOptions) put(`until ${p.until} ${sortedEntries(p.options)}`);
      const rk = index.rowKeys.get(field.name);
      if (rk) putKeys(put, 'rows', rk);
      putAttrs(put, 'row', field.rowAttrs);
      for (const view of [...field.views.values()].sort(byName)) {
        for (const shard of [...view.fragments.keys()].sort((a, b) => a - b)) {
          const frag = view.fragments.get(shard)!;
          for (const row of frag.rowIds()) {
            put(`bits ${view.name} ${shard} ${row}`);
            // The bits, not their containers: a run-optimized row and its array form are equal.
            const bits = frag.peekRow(row)!.toUint32Array();
            h.update(new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength));
          }
        }
      }
    }
    for (const key of [...index.legacyMeta.keys()].sort())
      put(`legacy ${JSON.stringify(key)} ${JSON.stringify(index.legacyMeta.get(key))}`);
  }
  for (const name of [...holder.ingests.keys()].sort()) {
    const ingest = holder.ingests.get(name)!;
    put(
      `ingest ${JSON.stringify(name)} ${ingest.paused} records=${ingest.records} dead=${ingest.deadLettered} ${JSON.stringify(ingest.spec)}`,
    );
    for (const topic of [...ingest.offsets.keys()].sort()) {
      const byPartition = ingest.offsets.get(topic)!;
      for (const p of [...byPartition.keys()].sort((a, b) => a - b))
        put(`offset ${JSON.stringify(topic)} ${p} ${byPartition.get(p)}`);
    }
  }
  for (const key of [...holder.commandMarks.keys()].sort()) {
    const m = holder.commandMarks.get(key)!;
    put(`mark ${key} ${m.offset} ${m.position} ${m.maxMs}`);
  }
  return h.digest('hex');
}

/** Every option, in key order: a new option cannot be left out by accident. */
function sortedEntries(o: object): string {
  return Object.entries(o)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
}

function putKeys(put: (s: string) => void, what: string, t: ReadonlyKeyTranslator): void {
  // An empty table is the same as none (a read may create one without assigning anything).
  if (t.nextId === 1 && t.size === 0) return;
  // size counts key → id entries: a key assigned twice shows here even if id → key agrees.
  put(`keys ${what} next=${t.nextId} size=${t.size}`);
  for (let id = 1; id < t.nextId; id++) put(`key ${what} ${id} ${JSON.stringify(t.key(id))}`);
}

function putAttrs(put: (s: string) => void, what: string, attrs: ReadonlyMap<number, AttrMap>): void {
  for (const id of [...attrs.keys()].sort((a, b) => a - b)) {
    const a = attrs.get(id)!;
    put(
      `attrs ${what} ${id} ${Object.keys(a)
        .sort()
        .map((k) => `${k}=${typeof a[k]}:${String(a[k])}`)
        .join(',')}`,
    );
  }
}
