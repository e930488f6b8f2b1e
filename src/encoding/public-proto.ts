// Pilosa's public protobuf messages (proto/public.proto) ⇄ plain typed values. protobufjs does the
// small messages; the big repeated uint64s (Row columns, row IDs) are packed by hand because
// protobufjs allocates per element there. Fields are written in field-number order, as Go does,
// so bodies match Pilosa's byte for byte. No protobufjs Long leaves this file: uint64s become
// numbers (rejected above 2^53−1) and int64s bigints.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { Type, Writer } from 'protobufjs';
import { badRequest, DomainError } from '../domain/errors.js';
import type { AttrMap, AttrValue } from '../domain/types.js';
import type {
  ColumnAttrSet,
  FieldRow,
  PairResult,
  QueryResponse,
  QueryResult,
  RowColumns,
} from '../executor/result.js';
import { assert, assertNever } from '../util/assert.js';
import { setOwn } from '../util/own-property.js';
import { encodePackedUint64s } from './import-request-encode.js';

export interface QueryRequestMessage {
  query: string;
  shards: number[];
  columnAttrs: boolean;
  excludeRowAttrs: boolean;
  excludeColumns: boolean;
}

export interface TranslateKeysRequestMessage {
  index: string;
  /** Empty: the keys are column keys of the index. */
  field: string;
  keys: string[];
}

export interface ImportRoaringRequestMessage {
  clear: boolean;
  views: { name: string; data: Uint8Array }[];
}

/** A decoded QueryResponse, shaped like the executor's results so tests can compare with JSON. */
export interface DecodedQueryResponse {
  err: string;
  results: QueryResult[];
  columnAttrs: ColumnAttrSet[];
}

function loadRoot(): protobuf.Root {
  // src/encoding/ under tsx, dist/src/encoding/ after tsc; proto/ sits at the repository root.
  const candidates = ['../../proto/public.proto', '../../../proto/public.proto'].map((p) =>
    fileURLToPath(new URL(p, import.meta.url)),
  );
  const file = candidates.find((f) => existsSync(f));
  assert(file !== undefined, `public.proto not found at ${candidates.join(' or ')}`);
  return new protobuf.Root().loadSync(file, { keepCase: true });
}

const root = loadRoot();
const type = (name: string): Type => root.lookupType(`internal.${name}`);
const T = {
  QueryRequest: type('QueryRequest'),
  QueryResponse: type('QueryResponse'),
  QueryResult: type('QueryResult'),
  Row: type('Row'),
  RowIdentifiers: type('RowIdentifiers'),
  Pair: type('Pair'),
  GroupCount: type('GroupCount'),
  ValCount: type('ValCount'),
  ColumnAttrSet: type('ColumnAttrSet'),
  Attr: type('Attr'),
  ImportRoaringRequest: type('ImportRoaringRequest'),
  ImportResponse: type('ImportResponse'),
  TranslateKeysRequest: type('TranslateKeysRequest'),
  TranslateKeysResponse: type('TranslateKeysResponse'),
};

/** Field numbers come from the loaded .proto, so the hand-written parts cannot drift from it. */
function id(t: Type, field: string): number {
  const f = t.fields[field];
  assert(f !== undefined, `public.proto: ${t.name} has no field ${field}`);
  return f.id;
}
const F = {
  err: id(T.QueryResponse, 'Err'),
  results: id(T.QueryResponse, 'Results'),
  columnAttrSets: id(T.QueryResponse, 'ColumnAttrSets'),
  row: id(T.QueryResult, 'Row'),
  n: id(T.QueryResult, 'N'),
  pairs: id(T.QueryResult, 'Pairs'),
  changed: id(T.QueryResult, 'Changed'),
  valCount: id(T.QueryResult, 'ValCount'),
  type: id(T.QueryResult, 'Type'),
  groupCounts: id(T.QueryResult, 'GroupCounts'),
  rowIdentifiers: id(T.QueryResult, 'RowIdentifiers'),
  rowColumns: id(T.Row, 'Columns'),
  rowAttrs: id(T.Row, 'Attrs'),
  rowKeys: id(T.Row, 'Keys'),
  identRows: id(T.RowIdentifiers, 'Rows'),
  identKeys: id(T.RowIdentifiers, 'Keys'),
  translateIds: id(T.TranslateKeysResponse, 'IDs'),
};

const VARINT = 0;
const LEN = 2;
const tag = (field: number, wireType: number): number => ((field << 3) | wireType) >>> 0;

/** QueryResult.Type (v1.4.0:encoding/proto/proto.go). 6 (internal RowIDs) is decoded only. */
const RESULT_TYPE = {
  null: 0,
  row: 1,
  pairs: 2,
  valcount: 3,
  count: 4,
  changed: 5,
  groupcounts: 7,
  rowids: 8,
  pair: 9,
} as const satisfies Record<QueryResult['type'], number>;

const ATTR_STRING = 1;
const ATTR_INT = 2;
const ATTR_BOOL = 3;
const ATTR_FLOAT = 4;

// ---- Encoding ----

type Message = Record<string, unknown>;

/** protobufjs writes int64 from {low, high}; this keeps bigints exact without the Long class. */
function int64(v: bigint): { low: number; high: number; unsigned: boolean } {
  return { low: Number(BigInt.asIntN(32, v)), high: Number(BigInt.asIntN(32, v >> 32n)), unsigned: false };
}

const utf8 = new TextEncoder();
/** Go's sort.Strings order: UTF-8 bytes (differs from UTF-16 `<` for astral characters). */
function byUtf8(a: string, b: string): number {
  return Buffer.compare(utf8.encode(a), utf8.encode(b));
}

function attrMessage(key: string, v: AttrValue): Message {
  switch (typeof v) {
    case 'string':
      return { Key: key, Type: ATTR_STRING, StringValue: v };
    case 'bigint':
      return { Key: key, Type: ATTR_INT, IntValue: int64(v) };
    case 'boolean':
      return { Key: key, Type: ATTR_BOOL, BoolValue: v };
    case 'number':
      // Go omits a zero double, including −0.
      return { Key: key, Type: ATTR_FLOAT, FloatValue: v === 0 ? 0 : v };
    default:
      return assertNever(v, 'attribute value');
  }
}

function attrMessages(attrs: AttrMap): Message[] {
  return Object.keys(attrs)
    .sort(byUtf8)
    .map((k) => attrMessage(k, attrs[k]));
}

function pairMessage(p: PairResult): Message {
  return { ID: p.id, Key: p.key ?? '', Count: p.count };
}

function fieldRowMessage(r: FieldRow): Message {
  return { Field: r.field, RowID: r.rowID ?? 0, RowKey: r.rowKey ?? '' };
}

function writeSub(w: Writer, field: number, t: Type, msg: Message): void {
  t.encode(msg, w.uint32(tag(field, LEN)).fork()).ldelim();
}

function writePacked(w: Writer, field: number, values: readonly (number | bigint)[]): void {
  if (values.length > 0) w.uint32(tag(field, LEN)).bytes(encodePackedUint64s(values));
}

function writeStrings(w: Writer, field: number, values: readonly string[] | undefined): void {
  for (const s of values ?? []) w.uint32(tag(field, LEN)).string(s);
}

function writeResult(w: Writer, r: QueryResult): void {
  // Fields 1–5, then Type (6), then 7–9: Go's marshalling order.
  switch (r.type) {
    case 'row':
      w.uint32(tag(F.row, LEN)).fork();
      writePacked(w, F.rowColumns, Array.isArray(r.columns) ? r.columns : r.columns.toArray());
      for (const a of attrMessages(r.attrs)) writeSub(w, F.rowAttrs, T.Attr, a);
      writeStrings(w, F.rowKeys, r.keys);
      w.ldelim();
      break;
    case 'count':
      if (r.n !== 0) w.uint32(tag(F.n, VARINT)).uint64(r.n);
      break;
    case 'pairs':
      for (const p of r.pairs) writeSub(w, F.pairs, T.Pair, pairMessage(p));
      break;
    case 'pair':
      writeSub(w, F.pairs, T.Pair, pairMessage(r.pair));
      break;
    case 'changed':
      if (r.changed) w.uint32(tag(F.changed, VARINT)).bool(true);
      break;
    case 'valcount':
      writeSub(w, F.valCount, T.ValCount, { Val: int64(r.value), Count: r.count });
      break;
    case 'null':
    case 'groupcounts':
    case 'rowids':
      break;
    default:
      assertNever(r, 'query result');
  }
  const t = RESULT_TYPE[r.type];
  if (t !== 0) w.uint32(tag(F.type, VARINT)).uint32(t);
  if (r.type === 'groupcounts') {
    for (const g of r.groups) {
      writeSub(w, F.groupCounts, T.GroupCount, { Group: g.group.map(fieldRowMessage), Count: g.count });
    }
  } else if (r.type === 'rowids') {
    w.uint32(tag(F.rowIdentifiers, LEN)).fork();
    writePacked(w, F.identRows, r.rows);
    writeStrings(w, F.identKeys, r.keys);
    w.ldelim();
  }
}

function columnAttrSetMessage(s: ColumnAttrSet): Message {
  return { ID: s.id ?? 0, Key: s.key ?? '', Attrs: attrMessages(s.attrs) };
}

export function encodeQueryResponse(resp: QueryResponse | { err: string }): Uint8Array {
  const w = protobuf.Writer.create();
  if ('err' in resp) {
    if (resp.err !== '') w.uint32(tag(F.err, LEN)).string(resp.err);
    return w.finish();
  }
  for (const r of resp.results) {
    w.uint32(tag(F.results, LEN)).fork();
    writeResult(w, r);
    w.ldelim();
  }
  for (const s of resp.columnAttrs ?? []) writeSub(w, F.columnAttrSets, T.ColumnAttrSet, columnAttrSetMessage(s));
  return w.finish();
}

export function encodeTranslateKeysResponse(ids: readonly number[]): Uint8Array {
  const w = protobuf.Writer.create();
  writePacked(w, F.translateIds, ids);
  return w.finish();
}

/** Empty error ⇒ zero bytes, as Pilosa answers a successful import. */
export function encodeImportResponse(err: string): Uint8Array {
  return T.ImportResponse.encode({ Err: err }).finish();
}

// ---- Decoding ----

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const bool = (v: unknown): boolean => v === true;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const msg = (v: unknown): Message => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Message) : {});
const big = (v: unknown): bigint => (typeof v === 'bigint' ? v : typeof v === 'number' ? BigInt(v) : 0n);

function safe(v: unknown, what: string, context: string): number {
  const b = big(v);
  if (b > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw badRequest(`unmarshaling ${context}: ${what} ${b} is above 2^53-1, which this server does not support`);
  }
  return Number(b);
}

/** Decodes to plain data: longs as bigint, defaults filled, bytes as Uint8Array views. */
function decode(t: Type, buf: Uint8Array, context: string): Message {
  try {
    return t.toObject(t.decode(buf), { longs: BigInt, arrays: true, defaults: true });
  } catch (e) {
    if (e instanceof DomainError) throw e;
    throw badRequest(`unmarshaling ${context}: proto: ${e instanceof Error ? e.message : String(e)}`);
  }
}

export function decodeQueryRequest(buf: Uint8Array): QueryRequestMessage {
  const m = decode(T.QueryRequest, buf, 'query request');
  return {
    query: str(m.Query),
    shards: list(m.Shards).map((s) => safe(s, 'shard', 'query request')),
    columnAttrs: bool(m.ColumnAttrs),
    excludeRowAttrs: bool(m.ExcludeRowAttrs),
    excludeColumns: bool(m.ExcludeColumns),
  };
}

export function decodeTranslateKeysRequest(buf: Uint8Array): TranslateKeysRequestMessage {
  const m = decode(T.TranslateKeysRequest, buf, 'translate keys request');
  return { index: str(m.Index), field: str(m.Field), keys: list(m.Keys).map(str) };
}

export function decodeImportRoaringRequest(buf: Uint8Array): ImportRoaringRequestMessage {
  const m = decode(T.ImportRoaringRequest, buf, 'import roaring request');
  return {
    clear: bool(m.Clear),
    views: list(m.views).map((v) => {
      const data = msg(v).Data;
      return { name: str(msg(v).Name), data: data instanceof Uint8Array ? data : new Uint8Array(0) };
    }),
  };
}

function decodeAttrs(attrs: unknown): AttrMap {
  const out: AttrMap = {};
  for (const a of list(attrs).map(msg)) {
    const key = str(a.Key);
    switch (Number(big(a.Type))) {
      case ATTR_STRING:
        setOwn(out, key, str(a.StringValue));
        break;
      case ATTR_INT:
        setOwn(out, key, big(a.IntValue));
        break;
      case ATTR_BOOL:
        setOwn(out, key, bool(a.BoolValue));
        break;
      case ATTR_FLOAT:
        setOwn(out, key, typeof a.FloatValue === 'number' ? a.FloatValue : 0);
        break;
      default:
        throw badRequest(`unmarshaling query response: unknown attr type ${String(a.Type)}`);
    }
  }
  return out;
}

function decodePair(v: unknown): PairResult {
  const p = msg(v);
  const key = str(p.Key);
  const pair: PairResult = { id: safe(p.ID, 'pair ID', 'query response'), count: Number(big(p.Count)) };
  if (key !== '') pair.key = key;
  return pair;
}

function decodeFieldRow(v: unknown): FieldRow {
  const r = msg(v);
  const rowKey = str(r.RowKey);
  return rowKey !== ''
    ? { field: str(r.Field), rowKey }
    : { field: str(r.Field), rowID: safe(r.RowID, 'row ID', 'query response') };
}

const ids = (v: unknown): number[] => list(v).map((x) => safe(x, 'ID', 'query response'));
/** Row columns: any uint64, a bigint only above 2^53−1 (as the executor's results). */
const columnIds = (v: unknown): (number | bigint)[] =>
  list(v).map((x) => {
    const b = big(x);
    return b > BigInt(Number.MAX_SAFE_INTEGER) ? b : Number(b);
  });

function withKeys<R extends object>(r: R, keys: unknown): R & { keys?: string[] } {
  const k = list(keys).map(str);
  return k.length > 0 ? { ...r, keys: k } : r;
}

function decodeResult(v: unknown): QueryResult {
  const r = msg(v);
  switch (Number(r.Type)) {
    case 0:
      return { type: 'null' };
    case 1: {
      const row = msg(r.Row);
      return withKeys({ type: 'row', columns: columnIds(row.Columns), attrs: decodeAttrs(row.Attrs) }, row.Keys);
    }
    case 2:
      return { type: 'pairs', pairs: list(r.Pairs).map(decodePair) };
    case 3: {
      const vc = msg(r.ValCount);
      return { type: 'valcount', value: big(vc.Val), count: Number(big(vc.Count)) };
    }
    case 4:
      return { type: 'count', n: Number(big(r.N)) };
    case 5:
      return { type: 'changed', changed: bool(r.Changed) };
    case 6:
      return { type: 'rowids', rows: ids(r.RowIDs) };
    case 7:
      return {
        type: 'groupcounts',
        groups: list(r.GroupCounts).map((g) => ({
          group: list(msg(g).Group).map(decodeFieldRow),
          count: Number(big(msg(g).Count)),
        })),
      };
    case 8: {
      const ri = msg(r.RowIdentifiers);
      return withKeys({ type: 'rowids', rows: ids(ri.Rows) }, ri.Keys);
    }
    case 9:
      return { type: 'pair', pair: decodePair(list(r.Pairs)[0]) };
    default:
      throw badRequest(`unmarshaling query response: unknown result type ${String(r.Type)}`);
  }
}

/** Inverse of encodeQueryResponse, for tests and clients: keys only when non-empty. */
export function decodeQueryResponse(buf: Uint8Array): DecodedQueryResponse {
  const m = decode(T.QueryResponse, buf, 'query response');
  return {
    err: str(m.Err),
    results: list(m.Results).map(decodeResult),
    columnAttrs: list(m.ColumnAttrSets).map((v) => {
      const s = msg(v);
      const key = str(s.Key);
      const attrs = decodeAttrs(s.Attrs);
      return key !== '' ? { key, attrs } : { id: safe(s.ID, 'column ID', 'query response'), attrs };
    }),
  };
}

// ---- Client side (tests, benchmarks): the requests this server decodes. ----

export function encodeQueryRequest(req: {
  query: string;
  shards?: readonly number[];
  columnAttrs?: boolean;
  remote?: boolean;
  excludeRowAttrs?: boolean;
  excludeColumns?: boolean;
}): Uint8Array {
  return T.QueryRequest.encode({
    Query: req.query,
    Shards: req.shards ?? [],
    ColumnAttrs: req.columnAttrs ?? false,
    Remote: req.remote ?? false,
    ExcludeRowAttrs: req.excludeRowAttrs ?? false,
    ExcludeColumns: req.excludeColumns ?? false,
  }).finish();
}

export function encodeTranslateKeysRequest(req: TranslateKeysRequestMessage): Uint8Array {
  return T.TranslateKeysRequest.encode({ Index: req.index, Field: req.field, Keys: req.keys }).finish();
}

export function decodeTranslateKeysResponse(buf: Uint8Array): number[] {
  const m = decode(T.TranslateKeysResponse, buf, 'translate keys response');
  return list(m.IDs).map((x) => safe(x, 'ID', 'translate keys response'));
}

export function encodeImportRoaringRequest(req: ImportRoaringRequestMessage): Uint8Array {
  return T.ImportRoaringRequest.encode({
    Clear: req.clear,
    views: req.views.map((v) => ({ Name: v.name, Data: v.data })),
  }).finish();
}

export function decodeImportResponse(buf: Uint8Array): string {
  return str(decode(T.ImportResponse, buf, 'import response').Err);
}

// ---- A large answer in pieces ----

const PROTO_SLICE = 16_384;

/**
 * encodeQueryResponse's bytes as a series of pieces: one per result (repeated fields concatenate),
 * a large row's columns packed PROTO_SLICE at a time behind a length computed up front.
 * Empty pieces mark points where the writer may yield (while a row's size is summed).
 */
export function* queryResponseProtoPieces(resp: QueryResponse): Generator<Uint8Array, void, undefined> {
  for (const r of resp.results) {
    if (r.type === 'row' && r.columns.length > PROTO_SLICE) yield* rowResultPieces(r);
    else yield encodeQueryResponse({ results: [r] });
  }
  const sets = resp.columnAttrs ?? [];
  for (let at = 0; at < sets.length; at += PROTO_SLICE)
    yield encodeQueryResponse({ results: [], columnAttrs: sets.slice(at, at + PROTO_SLICE) });
}

const NO_BYTES = new Uint8Array(0);

function* rowResultPieces(r: Extract<QueryResult, { type: 'row' }>): Generator<Uint8Array, void, undefined> {
  const rest = protobuf.Writer.create();
  for (const a of attrMessages(r.attrs)) writeSub(rest, F.rowAttrs, T.Attr, a);
  writeStrings(rest, F.rowKeys, r.keys);
  const restBytes = rest.finish();
  let packed = 0;
  for (const piece of columnPieces(r.columns)) {
    for (const c of piece) packed += uint64Size(c);
    yield NO_BYTES;
  }
  const rowHead = protobuf.Writer.create().uint32(tag(F.rowColumns, LEN)).uint32(packed).finish();
  const rowLen = rowHead.length + packed + restBytes.length;
  const typeBytes = protobuf.Writer.create().uint32(tag(F.type, VARINT)).uint32(RESULT_TYPE.row).finish();
  const inRow = protobuf.Writer.create().uint32(tag(F.row, LEN)).uint32(rowLen).finish();
  const resultLen = inRow.length + rowLen + typeBytes.length;
  const head = protobuf.Writer.create().uint32(tag(F.results, LEN)).uint32(resultLen).finish();
  yield Buffer.concat([head, inRow, rowHead]);
  for (const piece of columnPieces(r.columns)) yield encodePackedUint64s(piece);
  yield Buffer.concat([restBytes, typeBytes]);
}

/** A row's columns PROTO_SLICE at a time (an array's slices, or ShardColumns' pieces). */
function* columnPieces(columns: RowColumns): Generator<readonly (number | bigint)[], void, undefined> {
  if (!Array.isArray(columns)) {
    yield* columns.pieces(PROTO_SLICE);
    return;
  }
  for (let at = 0; at < columns.length; at += PROTO_SLICE) yield columns.slice(at, at + PROTO_SLICE);
}

/** Bytes of a uint64 as a varint. */
function uint64Size(v: number | bigint): number {
  let n = 1;
  if (typeof v === 'bigint') {
    for (let x = v; x >= 128n; x >>= 7n) n++;
    return n;
  }
  // Compares, not divisions: the sizing pass runs over every column of a large row.
  if (v < 2 ** 28) return v < 128 ? 1 : v < 16_384 ? 2 : v < 2_097_152 ? 3 : 4;
  for (let x = v; x >= 128; x = Math.floor(x / 128)) n++;
  return n;
}
