/**
 * String key ⇄ ID translation for one index (columns) or one field (rows). IDs are sequential
 * from 1 and never reused. Assignment is decided before the log append and carried in the
 * KeysAssigned event, so replay never renumbers.
 */
export class KeyTranslator {
  private readonly ids = new Map<string, number>();
  private readonly keys = new Map<number, string>();
  private last = 0;

  get nextId(): number {
    return this.last + 1;
  }

  get size(): number {
    return this.ids.size;
  }

  id(key: string): number | undefined {
    return this.ids.get(key);
  }

  key(id: number): string | undefined {
    return this.keys.get(id);
  }

  /** Only apply() (events/kinds/) calls this. */
  assign(firstId: number, keys: readonly string[]): void {
    let id = firstId;
    for (const k of keys) {
      this.ids.set(k, id);
      this.keys.set(id, k);
      if (id > this.last) this.last = id;
      id++;
    }
  }

  entries(): IterableIterator<[string, number]> {
    return this.ids.entries();
  }
}
