// An EventSink for tests: applies every event to a Holder at once (as the engine does) and keeps
// the list. Plus small schema helpers that go through the same events.
import { type FieldOptions, type FieldType, type IndexOptions, defaultFieldOptions } from '../../src/domain/types.js';
import type { Event, EventSink } from '../../src/events/types.js';
import { apply } from '../../src/events/apply.js';
import { Holder } from '../../src/state/holder.js';

export class MemorySink implements EventSink {
  readonly events: Event[] = [];

  constructor(readonly holder: Holder = new Holder()) {}

  emit(event: Event): void {
    apply(this.holder, event);
    this.holder.appliedSeq++;
    this.events.push(event);
  }

  /** Events emitted since `mark` (an earlier events.length). */
  since(mark: number): Event[] {
    return this.events.slice(mark);
  }

  createIndex(name: string, options: Partial<IndexOptions> = {}): this {
    this.emit({ type: 'IndexCreated', index: name, options: { keys: false, trackExistence: true, ...options } });
    return this;
  }

  createField(index: string, name: string, type: FieldType = 'set', options: Partial<FieldOptions> = {}): this {
    const base = defaultFieldOptions(type);
    if (type === 'time' && options.timeQuantum === undefined) base.timeQuantum = 'YMDH';
    this.emit({ type: 'FieldCreated', index, field: name, options: { ...base, ...options } });
    return this;
  }
}
