// Query texts already accepted, with what accepting them found: clients send the same few PQL
// texts again and again (a dashboard's Counts, a TopN), and parsing one cost about 4 µs and
// 2 KB of garbage a request (issue 24, http bench). The parsed query is frozen and shared: no
// layer changes a parsed query (plans, rewrites and encodings make new objects), and a change
// would throw rather than reach another request.
import type { Call, Query, Value } from '../pql/ast.js';

export interface AcceptedText {
  parsed: Query;
  /** The query uses 0.x calls (its answer names row columns `bits`). */
  legacy: boolean;
  /** The top-level call names. */
  calls: readonly string[];
}

/** Texts kept at most; the oldest goes first. */
const MAX_TEXTS = 1024;
/** Longer texts are parsed every time: they are rarely repeated, and would hold more memory. */
const MAX_TEXT_CHARS = 2048;

export class QueryTexts {
  private readonly texts = new Map<string, AcceptedText>();

  get(text: string): AcceptedText | undefined {
    return this.texts.get(text);
  }

  /** Keeps `accepted` for `text` (short texts only), frozen; returns it. */
  keep(text: string, accepted: AcceptedText): AcceptedText {
    if (text.length > MAX_TEXT_CHARS) return accepted;
    if (this.texts.size >= MAX_TEXTS) {
      const oldest = this.texts.keys().next();
      if (oldest.done !== true) this.texts.delete(oldest.value);
    }
    freezeQuery(accepted.parsed);
    Object.freeze(accepted.calls);
    this.texts.set(text, Object.freeze(accepted));
    return accepted;
  }
}

function freezeQuery(q: Query): void {
  for (const c of q.calls) freezeCall(c);
  Object.freeze(q.calls);
  Object.freeze(q);
}

function freezeCall(c: Call): void {
  for (const v of c.args.values()) freezeValue(v);
  for (const child of c.children) freezeCall(child);
  Object.freeze(c.children);
  Object.freeze(c);
}

function freezeValue(v: Value): void {
  if (v.kind === 'list') {
    for (const item of v.items) freezeValue(item);
    Object.freeze(v.items);
  } else if (v.kind === 'call') freezeCall(v.call);
  else if (v.kind === 'condition') freezeValue(v.value);
  Object.freeze(v);
}
