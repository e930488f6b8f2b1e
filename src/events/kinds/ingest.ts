// Kafka-fed ingest events: a definition, its deletion, and the offsets a commit consumed.
import { assert } from '../../util/assert.js';
import type { EventKinds } from '../kind.js';
import { message, num, nums, obj, str, strs } from '../proto-fields.js';

export type IngestEvent =
  /**
   * Kafka-fed import: next offsets to consume per partition, committed in the same batch as the
   * bits they produced; records/deadLettered are counts added by this commit (exactly-once totals).
   */
  | {
      type: 'KafkaOffsetsCommitted';
      ingest: string;
      topic: string;
      partitions: number[];
      offsets: string[];
      records: number;
      deadLettered: number;
    }
  /** An ingest definition (src/kafka), stored as opaque JSON; re-defining keeps its offsets. */
  | { type: 'IngestDefined'; name: string; spec: string; paused: boolean }
  | { type: 'IngestDeleted'; name: string };

const M = {
  KafkaOffsetsCommitted: message('KafkaOffsetsCommitted'),
  IngestDefined: message('IngestDefined'),
  IngestDeleted: message('IngestDeleted'),
};

export const INGEST_EVENTS: EventKinds<IngestEvent> = {
  KafkaOffsetsCommitted: {
    code: 14,
    replay: 'commutes',
    snapshot: 'global',
    apply(holder, event) {
      const ingest = holder.ingests.get(event.ingest);
      assert(ingest !== undefined, `apply: ingest ${event.ingest} missing`);
      if (event.partitions.length > 0) {
        let byPartition = ingest.offsets.get(event.topic);
        if (byPartition === undefined) ingest.offsets.set(event.topic, (byPartition = new Map()));
        for (let i = 0; i < event.partitions.length; i++) byPartition.set(event.partitions[i], event.offsets[i]);
      }
      ingest.records += event.records;
      ingest.deadLettered += event.deadLettered;
    },
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
    apply(holder, event) {
      const existing = holder.ingests.get(event.name);
      if (existing !== undefined) Object.assign(existing, { spec: event.spec, paused: event.paused });
      else
        holder.ingests.set(event.name, {
          spec: event.spec,
          paused: event.paused,
          offsets: new Map(),
          records: 0,
          deadLettered: 0,
        });
    },
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
    apply(holder, event) {
      assert(holder.ingests.delete(event.name), `apply: ingest ${event.name} missing`);
    },
    encode: (e) => M.IngestDeleted.encode({ name: e.name }).finish(),
    decode: (payload) => ({ type: 'IngestDeleted', name: str(obj(M.IngestDeleted, payload).name) }),
  },
};
