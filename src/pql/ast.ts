// The PQL abstract syntax tree. The parser produces it; the executor reads it. Knows nothing of state.
//
// Integers are always bigint (PQL integers are signed 64-bit, and column/row IDs or int-field
// values can pass 2^53). Floats are number. Bare words, quoted strings and timestamps
// (`2017-01-01T00:00`) are strings.

export type CondOp = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'between';

export type Value =
  | { kind: 'int'; value: bigint }
  | { kind: 'float'; value: number }
  | { kind: 'string'; value: string }
  | { kind: 'bool'; value: boolean }
  | { kind: 'null' }
  | { kind: 'list'; items: Value[] }
  | { kind: 'call'; call: Call }
  /**
   * `f < 10`, `f != null`, `f >< [a,b]` and `a < f < b`. For 'between' the value is a list of
   * two ints, inclusive: the parser turns strict `<` bounds into inclusive ones (a+1, b-1), as
   * Pilosa does.
   */
  | { kind: 'condition'; op: CondOp; value: Value };

export interface Call {
  name: string;
  /**
   * Arguments in source order. Positional arguments get Pilosa's reserved names:
   * `_col` (Set/Clear/SetColumnAttrs first arg), `_row` (SetRowAttrs second arg),
   * `_field` (TopN/Rows/SetRowAttrs first arg), `_timestamp` (Set's optional last arg),
   * and `from`/`to` for the legacy `Range(f=1, TS, TS)` form.
   */
  args: Map<string, Value>;
  /** Child calls, which precede the key=value arguments in the source. */
  children: Call[];
  /** 0-based offset of the call name in the query text. */
  pos: number;
}

export interface Query {
  calls: Call[];
}
