// A query's JSON answer as a series of bounded pieces, byte for byte the text of
// stringify(queryResponseJson(…)) + '\n', for answers too large to build as one string: a row's
// columns and keys, pairs, groups and row IDs are written in pieces of about 64 KiB.
import type { QueryResponse, QueryResult } from '../executor/result.js';
import type { ShardColumns } from '../executor/shard-columns.js';
import { type Jsonish, stringify } from './json.js';
import { attrsJson, columnAttrsJson, resultJson } from './query-json.js';

const PIECE_CHARS = 64 * 1024;
/** About 64 KiB of IDs below 2^24, 128 KiB at 2^53. */
const IDS_PER_PIECE = 8192;

/** The pieces of the answer; the caller joins consecutive ones into socket-sized writes. */
export function* queryJsonChunks(
  resp: QueryResponse,
  legacy = false,
  calls?: readonly string[],
): Generator<string, void, undefined> {
  yield '{"results":[';
  for (let i = 0; i < resp.results.length; i++) {
    if (i > 0) yield ',';
    yield* resultChunks(resp.results[i], legacy, legacy && (calls === undefined || calls[i] === 'Sum'));
  }
  yield ']';
  const attrs = columnAttrsJson(resp);
  if (attrs !== undefined) {
    yield ',"columnAttrs":[';
    yield* sliced(attrs, (a) => stringify(a));
    yield ']';
  }
  yield '}\n';
}

function* resultChunks(r: QueryResult, legacy: boolean, sumShape: boolean): Generator<string, void, undefined> {
  switch (r.type) {
    case 'row': {
      yield `{"attrs":${stringify(attrsJson(r.attrs))},"${legacy ? 'bits' : 'columns'}":[`;
      yield* slicedIds(r.columns);
      yield ']';
      if (r.keys !== undefined && r.keys.length > 0) {
        yield ',"keys":[';
        yield* sliced(r.keys, (k) => JSON.stringify(k));
        yield ']';
      }
      yield '}';
      return;
    }
    case 'pairs':
    case 'groupcounts':
      yield '[';
      yield* sliced(resultJson(r, legacy, sumShape) as Jsonish[], stringify);
      yield ']';
      return;
    case 'rowids':
      if (r.keys !== undefined && r.keys.length === 0) break;
      yield r.keys === undefined ? '{"rows":[' : '{"rows":null,"keys":[';
      if (r.keys === undefined) yield* slicedIds(r.rows);
      else yield* sliced(r.keys, (k) => JSON.stringify(k));
      yield ']}';
      return;
    default:
      break;
  }
  yield stringify(resultJson(r, legacy, sumShape));
}

/** IDs (integers, bigints) joined by commas, IDS_PER_PIECE at a time: Array.join is native. */
function* slicedIds(ids: readonly (number | bigint)[] | ShardColumns): Generator<string, void, undefined> {
  if (!Array.isArray(ids)) {
    let first = true;
    for (const piece of (ids as ShardColumns).pieces(IDS_PER_PIECE)) {
      yield (first ? '' : ',') + piece.join(',');
      first = false;
    }
    return;
  }
  for (let at = 0; at < ids.length; at += IDS_PER_PIECE)
    yield (at > 0 ? ',' : '') + ids.slice(at, at + IDS_PER_PIECE).join(',');
}

/** Elements joined by commas, in pieces of about PIECE_CHARS. */
function* sliced<T>(items: readonly T[], text: (item: T) => string): Generator<string, void, undefined> {
  let parts: string[] = [];
  let chars = 0;
  let first = true;
  for (const item of items) {
    const t = text(item);
    parts.push(t);
    chars += t.length + 1;
    if (chars < PIECE_CHARS) continue;
    yield (first ? '' : ',') + parts.join(',');
    first = false;
    parts = [];
    chars = 0;
  }
  if (parts.length > 0) yield (first ? '' : ',') + parts.join(',');
}
