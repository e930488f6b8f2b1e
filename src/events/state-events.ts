// A snapshot is the state written as the shortest list of events that rebuilds it: restoring one
// is replaying it through apply(), the same path as the log itself.
import { EXISTS_FIELD } from '../domain/names.js';
import type { ReadonlyField, ReadonlyHolder, ReadonlyKeyTranslator } from '../state/readonly.js';
import type { FragmentState } from '../state/snapshot.js';

export type { FragmentState } from '../state/snapshot.js';
import type { Event } from './types.js';

/** The fragment's rows as one BitsSet (packed rows through views that are not kept). */
export function fragmentEvent(s: FragmentState): Extract<Event, { type: 'BitsSet' }> {
  const { index, field, view, fragment } = s;
  const rows = fragment.rowIds();
  const columns = rows.map((r) => fragment.peekRow(r)!);
  return { type: 'BitsSet', index, field, view, shard: fragment.shard, rows, columns };
}

const meta = (x: { incarnation?: string }) => (x.incarnation === undefined ? {} : { meta: x.incarnation });

/** Created with its first options, then each change: the same priorOptions on restore. */
function* fieldEvents(index: string, field: ReadonlyField): Generator<Event> {
  const prior = field.priorOptions;
  const first = prior.length > 0 ? prior[0].options : field.options;
  yield { type: 'FieldCreated', index, field: field.name, options: { ...first }, ...meta(field) };
  for (let i = 0; i < prior.length; i++) {
    const options = { ...(i + 1 < prior.length ? prior[i + 1].options : field.options) };
    yield { type: 'FieldOptionsChanged', index, field: field.name, options, meta: prior[i].until };
  }
}

export function* stateEvents(holder: ReadonlyHolder): Generator<Event | FragmentState> {
  for (const index of holder.sortedIndexes()) {
    yield { type: 'IndexCreated', index: index.name, options: { ...index.options }, ...meta(index) };
    for (const field of index.fields.values()) {
      if (field.name !== EXISTS_FIELD) yield* fieldEvents(index.name, field);
      if (field.bitDepth > 0)
        yield { type: 'BitDepthRaised', index: index.name, field: field.name, bitDepth: field.bitDepth };
    }
    yield* keyEvents(index.name, '', index.columnKeys);
    for (const [field, t] of index.rowKeys) if (index.fields.has(field)) yield* keyEvents(index.name, field, t);
    for (const field of index.fields.values()) {
      for (const view of field.views.values()) {
        for (const frag of view.fragments.values()) {
          if (!frag.isEmpty)
            yield { type: 'Fragment', index: index.name, field: field.name, view: view.name, fragment: frag };
        }
      }
      for (const [row, attrs] of field.rowAttrs)
        yield { type: 'RowAttrsSet', index: index.name, field: field.name, row, attrs };
    }
    for (const [column, attrs] of index.columnAttrs) yield { type: 'ColumnAttrsSet', index: index.name, column, attrs };
    for (const [key, value] of index.legacyMeta) yield { type: 'LegacyMetaSet', index: index.name, key, value };
  }
  // Cluster positions: a mark's time is its partition's newest (apply keeps the maximum).
  for (const m of holder.commandMarks.values())
    yield {
      type: 'CommandApplied',
      topic: m.topic,
      partition: m.partition,
      offset: m.offset,
      position: m.position,
      timeMs: m.maxMs,
    };
  // Kafka-fed ingests: definition, then offsets per topic (totals ride on the first commit).
  for (const [name, ingest] of holder.ingests) {
    yield { type: 'IngestDefined', name, spec: ingest.spec, paused: ingest.paused };
    let records = ingest.records;
    let deadLettered = ingest.deadLettered;
    for (const [topic, byPartition] of ingest.offsets) {
      yield {
        type: 'KafkaOffsetsCommitted',
        ingest: name,
        topic,
        partitions: [...byPartition.keys()],
        offsets: [...byPartition.values()],
        records,
        deadLettered,
      };
      records = deadLettered = 0;
    }
    if (records > 0 || deadLettered > 0)
      yield {
        type: 'KafkaOffsetsCommitted',
        ingest: name,
        topic: '',
        partitions: [],
        offsets: [],
        records,
        deadLettered,
      };
  }
}

function* keyEvents(index: string, field: string, t: ReadonlyKeyTranslator): Generator<Event> {
  if (t.size === 0) return;
  const keys: string[] = [];
  for (let id = 1; id < t.nextId; id++) keys.push(t.key(id) ?? '');
  yield { type: 'KeysAssigned', index, field, firstId: 1, keys };
}
