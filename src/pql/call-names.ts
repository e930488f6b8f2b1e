// The call names the server knows, as string constants. The parser hands these out instead of
// fresh slices of the query text, so the executor's many `switch (call.name)` comparisons match
// by identity (V8 compares two internalized strings by pointer, a fresh slice by content).
const KNOWN: ReadonlyMap<string, string> = new Map(
  [
    'Row',
    'Range',
    'Union',
    'Intersect',
    'Difference',
    'Xor',
    'Not',
    'Shift',
    'Count',
    'Sum',
    'Min',
    'Max',
    'MinRow',
    'MaxRow',
    'TopN',
    'Rows',
    'GroupBy',
    'Options',
    'Set',
    'Clear',
    'ClearRow',
    'Store',
    'SetRowAttrs',
    'SetColumnAttrs',
    'Bitmap',
    'SetBit',
    'ClearBit',
    'SetFieldValue',
  ].map((n) => [n, n]),
);

/** `name` itself, as the shared constant when it is a known call name. */
export function canonicalCallName(name: string): string {
  return KNOWN.get(name) ?? name;
}

/** Whether `name` is a call the server knows (metrics label it by name, others as "other"). */
export function isKnownCallName(name: string): boolean {
  return KNOWN.has(name);
}
