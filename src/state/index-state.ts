import type { AttrMap, IndexOptions } from '../domain/types.js';
import { EXISTS_FIELD } from '../domain/names.js';
import type { Field } from './field.js';
import { KeyTranslator } from './keys.js';
import { fragmentLayout } from './view.js';

/** An index: options, fields (including the hidden `_exists`), column attrs and key maps. */
export class Index {
  readonly fields = new Map<string, Field>();
  readonly columnAttrs = new Map<number, AttrMap>();
  readonly columnKeys = new KeyTranslator();
  /** Row key translators by field name (dropped with the field). */
  readonly rowKeys = new Map<string, KeyTranslator>();
  /** Legacy 0.x frame-API metadata (JSON by key; src/service/legacy/legacy-meta.ts), dropped with the index. */
  readonly legacyMeta = new Map<string, string>();

  constructor(
    readonly name: string,
    readonly options: IndexOptions,
    /** Cluster mode: offset in NAME.meta of the command that created this index (events/types.ts). */
    readonly incarnation?: string,
  ) {}

  field(name: string): Field | undefined {
    return this.fields.get(name);
  }

  get existence(): Field | undefined {
    return this.options.trackExistence ? this.fields.get(EXISTS_FIELD) : undefined;
  }

  rowKeysFor(field: string): KeyTranslator {
    let t = this.rowKeys.get(field);
    if (t === undefined) {
      t = new KeyTranslator();
      this.rowKeys.set(field, t);
    }
    return t;
  }

  private shardCache: { version: number; shards: readonly number[] } | undefined;

  /** Shards holding any data in any field (Pilosa's "available shards"), ascending. */
  shards(): readonly number[] {
    if (this.shardCache?.version === fragmentLayout.version) return this.shardCache.shards;
    const s = new Set<number>();
    for (const f of this.fields.values())
      for (const v of f.views.values()) for (const shard of v.fragments.keys()) s.add(shard);
    const shards = [...s].sort((a, b) => a - b);
    this.shardCache = { version: fragmentLayout.version, shards };
    return shards;
  }
}
