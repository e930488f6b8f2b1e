// Metadata events: the 0.x API's metadata of an index, and cluster mode's command marks.
import { indexOf } from '../apply-support.js';
import { commandMarkKey } from '../../state/holder.js';
import type { EventKinds } from '../kind.js';
import { message, num, obj, str } from '../proto-fields.js';

export type MetaEvent =
  /**
   * Legacy (0.x frame API) metadata of an index — frame options, index time quantum, input
   * definitions — as opaque JSON under a key (src/service/legacy owns the meaning); null deletes.
   */
  | { type: 'LegacyMetaSet'; index: string; key: string; value: string | null }
  /**
   * Cluster mode (src/cluster): a command of NAME.meta or NAME.log applied here — the offset of its
   * last message, the stored position a consumer resumes from after it (cluster/commands/position.ts)
   * and the time its coordinator stamped on it. It closes the commit of the command's events,
   * so a replay knows which command each record came from (time-travel reads), and a snapshot
   * carries each partition's position and newest time (cluster backups). A partition installed
   * from another holder's snapshot is marked with an empty `offset` and the snapshot's newest
   * time: a time-travel read before it cannot be answered from this node's log.
   */
  | { type: 'CommandApplied'; topic: string; partition: number; offset: string; position: string; timeMs: number };

const M = { LegacyMetaSet: message('LegacyMetaSet'), CommandApplied: message('CommandApplied') };

export const META_EVENTS: EventKinds<MetaEvent> = {
  LegacyMetaSet: {
    code: 18,
    replay: 'commutes',
    snapshot: 'global',
    apply(holder, event) {
      const index = indexOf(holder, event.index);
      if (event.value === null) index.legacyMeta.delete(event.key);
      else index.legacyMeta.set(event.key, event.value);
    },
    encode: (e) =>
      M.LegacyMetaSet.encode({ index: e.index, key: e.key, value: e.value ?? '', deleted: e.value === null }).finish(),
    decode: (payload) => {
      const m = obj(M.LegacyMetaSet, payload);
      const value = m.deleted === true ? null : str(m.value);
      return { type: 'LegacyMetaSet', index: str(m.index), key: str(m.key), value };
    },
  },
  CommandApplied: {
    code: 19,
    replay: 'commutes',
    snapshot: 'mark',
    apply(holder, event) {
      const key = commandMarkKey(event.topic, event.partition);
      const maxMs = Math.max(holder.commandMarks.get(key)?.maxMs ?? event.timeMs, event.timeMs);
      const { topic, partition, offset, position } = event;
      holder.commandMarks.set(key, { topic, partition, offset, position, maxMs });
    },
    encode: (e) =>
      M.CommandApplied.encode({
        topic: e.topic,
        partition: e.partition,
        offset: e.offset,
        position: e.position,
        timeMs: e.timeMs,
      }).finish(),
    decode: (payload) => {
      const m = obj(M.CommandApplied, payload);
      return {
        type: 'CommandApplied',
        topic: str(m.topic),
        partition: num(m.partition),
        offset: str(m.offset),
        position: str(m.position),
        timeMs: num(m.timeMs),
      };
    },
  },
};
