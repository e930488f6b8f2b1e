// Kafka-fed ingest events: a definition, its deletion, and the offsets a commit consumed.
import type { EventKinds } from '../kind.js';
import { message, num, nums, obj, str, strs } from '../proto-fields.js';

const M = {
  KafkaOffsetsCommitted: message('KafkaOffsetsCommitted'),
  IngestDefined: message('IngestDefined'),
  IngestDeleted: message('IngestDeleted'),
};

export const INGEST_EVENTS: EventKinds<'KafkaOffsetsCommitted' | 'IngestDefined' | 'IngestDeleted'> = {
  KafkaOffsetsCommitted: {
    code: 14,
    replay: 'commutes',
    snapshot: 'global',
    encode: (e) =>
      M.KafkaOffsetsCommitted.encode({
        ingest: e.ingest,
        topic: e.topic,
        partitions: e.partitions,
        offsets: e.offsets,
        records: e.records,
        deadLettered: e.deadLettered,
      }).finish(),
    decode: (payload) => {
      const m = obj(M.KafkaOffsetsCommitted, payload);
      return {
        type: 'KafkaOffsetsCommitted',
        ingest: str(m.ingest),
        topic: str(m.topic),
        partitions: nums(m.partitions),
        offsets: strs(m.offsets),
        records: num(m.records),
        deadLettered: num(m.deadLettered),
      };
    },
  },
  IngestDefined: {
    code: 16,
    replay: 'commutes',
    snapshot: 'global',
    encode: (e) => M.IngestDefined.encode({ name: e.name, spec: e.spec, paused: e.paused }).finish(),
    decode: (payload) => {
      const m = obj(M.IngestDefined, payload);
      return { type: 'IngestDefined', name: str(m.name), spec: str(m.spec), paused: m.paused === true };
    },
  },
  IngestDeleted: {
    code: 17,
    replay: 'commutes',
    snapshot: 'never',
    encode: (e) => M.IngestDeleted.encode({ name: e.name }).finish(),
    decode: (payload) => ({ type: 'IngestDeleted', name: str(obj(M.IngestDeleted, payload).name) }),
  },
};
