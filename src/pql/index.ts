// PQL front end: turns query text into the AST of ast.ts (docs/API.md §3.1, §3.4, §6.4).
//
// Invariants:
// - parse() either returns a Query or throws PqlParseError — never any other exception — and
//   runs in time linear in the input (no backtracking, call nesting capped at MAX_DEPTH).
// - Integers are bigint within signed 64-bit; Call.pos is the offset of the call name.
// - Syntax only: unknown call names and argument types are the executor's to reject.
// - PqlParseError.message has no `parsing:` prefix; the HTTP layer adds it.

export type { Call, CondOp, Query, Value } from './ast.js';
export { PqlParseError } from './parse-error.js';
export { MAX_DEPTH, parse } from './parser.js';
