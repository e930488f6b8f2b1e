// A field as a cluster command saw it: a holder applies a log command against its own schema, which
// may be further on than the one the command's coordinator had applied (its metaOffset). A field's
// time quantum (its options) changed in between (FieldOptionsChanged) would make holders that apply
// the command on either side of the change write different views; so a command's writes read the
// options as of its metaOffset (Field.optionsAt) and the field's state as it is now.
import type { ReadonlyField } from './readonly.js';

/** The field itself when its options have not changed since `metaOffset` (or it is undefined). */
export function fieldAsOf(field: ReadonlyField, metaOffset: string | undefined): ReadonlyField {
  const options = field.optionsAt(metaOffset);
  if (options === field.options) return field;
  return {
    name: field.name,
    incarnation: field.incarnation,
    options,
    priorOptions: field.priorOptions,
    optionsAt: (at) => field.optionsAt(at),
    views: field.views,
    rowAttrs: field.rowAttrs,
    get bitDepth() {
      return field.bitDepth;
    },
    get base() {
      return field.base;
    },
    view: (name) => field.view(name),
  };
}
