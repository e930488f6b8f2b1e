// /internal/translate/keys in cluster mode (Pilosa clients translate keys before keyed imports):
// known keys answer from this node's state once it has applied every meta change acknowledged
// before the request; unknown ones are one `keys` command on the meta topic, whose applied result
// is the IDs every node assigns (the same meta order from the same state).
import type { Engine } from '../../engine/engine.js';
import { translatorOf } from '../../service/key-service.js';
import type { ClusterWrites } from './cluster-writes.js';

export class ClusterKeyService {
  constructor(
    private readonly engine: Engine,
    private readonly writes: ClusterWrites,
  ) {}

  /** IDs of `keys`: column keys when `field` is '', else the field's row keys. */
  async translate(index: string, field: string, keys: string[]): Promise<number[]> {
    await this.writes.caughtUpMeta();
    // Validation (404 for an unknown index or field, 400 without keys) as one node, before sending.
    const known = this.engine.peekApplied((h) => {
      const t = translatorOf(h, index, field);
      return keys.map((k) => t.id(k));
    });
    const missing = [...new Set(keys.filter((_, i) => known[i] === undefined))];
    if (missing.length === 0) return known as number[];
    const r = (await this.writes.meta({
      kind: 'keys',
      index,
      columns: field === '' ? missing : [],
      rows: field === '' ? [] : [{ field, keys: missing }],
    })) as { columns: number[]; rows: number[][] };
    const got = field === '' ? r.columns : (r.rows[0] ?? []);
    const assigned = new Map(missing.map((k, i) => [k, got[i]]));
    return keys.map((k, i) => known[i] ?? (assigned.get(k) as number));
  }
}
