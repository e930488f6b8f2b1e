import type { AttrMap, FieldOptions } from '../domain/types.js';
import type { FragmentChanges } from './changes.js';
import { View } from './view.js';

/** A field: its options, views, row attributes and (int fields) the BSI bit depth. */
export class Field {
  readonly views = new Map<string, View>();
  readonly rowAttrs = new Map<number, AttrMap>();
  /** int fields: magnitude bits in use; grows with stored values, never shrinks (Pilosa 1.4). */
  bitDepth = 0;

  constructor(
    readonly name: string,
    readonly options: FieldOptions,
    /** Cluster mode: offset in NAME.meta of the command that created this field (events/types.ts). */
    readonly incarnation?: string,
    /** The holder's change tracking, handed to the views and fragments it creates. */
    private readonly changes?: FragmentChanges,
  ) {}

  view(name: string): View | undefined {
    return this.views.get(name);
  }

  viewForWrite(name: string): View {
    let v = this.views.get(name);
    if (v === undefined) {
      v = new View(name, this.changes);
      this.changes?.noteLayout();
      this.views.set(name, v);
    }
    return v;
  }

  /** int fields: Pilosa's bsiBase — min if min > 0, max if max < 0, else 0. */
  get base(): bigint {
    const { min, max } = this.options;
    if (min > 0n) return min;
    if (max < 0n) return max;
    return 0n;
  }
}
