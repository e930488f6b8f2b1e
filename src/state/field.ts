import type { AttrMap, FieldOptions } from '../domain/types.js';
import type { FragmentChanges } from './changes.js';
import { View } from './view.js';

/** A field: its options, views, row attributes and (int fields) the BSI bit depth. */
export class Field {
  readonly views = new Map<string, View>();
  /**
   * Cluster mode: the options before each change a meta command made (FieldOptionsChanged), oldest
   * first: `options` is what a log command sent at a meta offset up to `until` (the change's
   * offset) saw. A holder applies a command against the options as of its metaOffset (optionsAt),
   * not its own meta position, so every holder writes the same views whatever its timing.
   */
  readonly priorOptions: { readonly until: string; readonly options: Readonly<FieldOptions> }[] = [];
  readonly rowAttrs = new Map<number, AttrMap>();
  /** int fields: magnitude bits in use; grows with stored values, never shrinks (Pilosa 1.4). */
  bitDepth = 0;

  constructor(
    readonly name: string,
    /** Changed only by FieldOptionsChanged (its apply), which keeps the earlier ones in priorOptions. */
    public options: FieldOptions,
    /** Cluster mode: offset in NAME.meta of the command that created this field (events/types.ts). */
    readonly incarnation?: string,
    /** The holder's change tracking, handed to the views and fragments it creates. */
    private readonly changes?: FragmentChanges,
  ) {}

  /**
   * The options a command sent at meta offset `metaOffset` saw (its coordinator had applied the
   * meta commands before that offset); the current ones when undefined (not a cluster command).
   */
  optionsAt(metaOffset: string | undefined): Readonly<FieldOptions> {
    if (metaOffset === undefined || this.priorOptions.length === 0) return this.options;
    const at = BigInt(metaOffset);
    for (const p of this.priorOptions) if (at <= BigInt(p.until)) return p.options;
    return this.options;
  }

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
