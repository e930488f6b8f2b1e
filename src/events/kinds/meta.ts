// Metadata events: the 0.x API's metadata of an index, and cluster mode's command marks.
import type { EventKinds } from '../kind.js';
import { message, num, obj, str } from '../proto-fields.js';

const M = { LegacyMetaSet: message('LegacyMetaSet'), CommandApplied: message('CommandApplied') };

export const META_EVENTS: EventKinds<'LegacyMetaSet' | 'CommandApplied'> = {
  LegacyMetaSet: {
    code: 18,
    replay: 'commutes',
    snapshot: 'global',
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
