// Key translation for Pilosa clients (/internal/translate/keys): known keys answer from a read
// (so a read-only replica can answer them); unknown ones are assigned in one write by the write
// model's assignKeys (one KeysAssigned event).
import { badRequest } from '../domain/errors.js';
import { fieldNotFoundNamed, indexNotFoundNamed } from '../domain/messages.js';
import type { Engine } from '../engine/engine.js';
import { KeyTranslator } from '../state/keys.js';
import { assignKeys } from './write-model/keys.js';
import type { ReadonlyHolder, ReadonlyKeyTranslator } from '../state/readonly.js';

export class KeyService {
  constructor(private readonly engine: Engine) {}

  /** IDs of `keys`: column keys when `field` is '', else the field's row keys. */
  async translate(index: string, field: string, keys: string[]): Promise<number[]> {
    const known = await this.engine.read((h) => {
      const t = translatorOf(h, index, field);
      const out = keys.map((k) => t.id(k));
      return out.every((id) => id !== undefined) ? (out as number[]) : undefined;
    });
    return (
      known ??
      Array.from(
        await this.engine.commit({
          decide: (h, sink) => assignKeys(translatorOf(h, index, field), keys, sink, index, field),
        }),
      )
    );
  }
}

/** Column keys (field '') or a field's row keys: unknown index/field → 404, no keys configured → 400. */
export function translatorOf(h: ReadonlyHolder, index: string, field: string): ReadonlyKeyTranslator {
  const idx = h.index(index);
  if (!idx) throw indexNotFoundNamed(index);
  if (field === '') {
    if (!idx.options.keys) throw badRequest(`index ${index} does not use string keys`);
    return idx.columnKeys;
  }
  const f = idx.field(field);
  if (!f) throw fieldNotFoundNamed(field);
  if (!f.options.keys) throw badRequest(`field ${field} does not use string keys`);
  return idx.rowKeys.get(field) ?? EMPTY_KEYS;
}

/** Until a field's first key is assigned its translator does not exist; reads see this empty one. */
const EMPTY_KEYS = new KeyTranslator();
