// Bulk import: protobuf ImportRequest / ImportValueRequest (by field type), a JSON form of both
// for curl users, and import-roaring. Protobuf success is 200 with an empty body, as in Pilosa.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { badRequest } from '../../domain/errors.js';
import { fieldNotFoundNamed, indexNotFoundNamed, notValidArgument } from '../../domain/messages.js';
import { STANDARD_VIEW } from '../../domain/names.js';
import type { WideIdArray } from '../../domain/id-array.js';
import { checkShard, MAX_COLUMN_ID, parseShard } from '../../domain/shard.js';
import {
  decodeImportRequestAsync,
  decodeImportValueRequestAsync,
  peekImportHeader,
} from '../../encoding/import-request.js';
import { decodeImportRoaringRequest } from '../../encoding/public-proto.js';
import { int64 } from '../../service/field-options.js';
import type { BitsImport, ValuesImport } from '../../service/import/import-types.js';
import { bodyBuffer, boolArg, importEncoding, isProtobuf } from '../body.js';
import { jsonBody } from '../../encoding/json-body.js';
import type { HttpContext } from '../context.js';
import { sendError } from '../errors.js';
import { SUCCESS, sendJson } from '../reply.js';

type Params = { index: string; field: string };
const IMPORT_ARGS = new Set(['clear', 'ignoreKeyCheck']);

export function importRoutes(app: FastifyInstance, ctx: HttpContext): void {
  app.post<{ Params: Params; Querystring: Record<string, string> }>(
    '/index/:index/field/:field/import',
    async (req, reply) => {
      for (const k of Object.keys(req.query)) if (!IMPORT_ARGS.has(k)) throw notValidArgument(k);
      const clear = boolArg(req.query.clear);
      const { index, field } = req.params;
      const proto = importEncoding(req.headers['content-type'], true) === 'protobuf';
      // Only which decoder to use: the import validates against the state again when it writes,
      // so this need not wait for the durability of other requests' writes.
      const type = ctx.engine.peekApplied((h) => {
        const f = h.index(index)?.field(field);
        if (!h.index(index)) throw indexNotFoundNamed(index);
        if (!f) throw fieldNotFoundNamed(field);
        return f.options.type;
      });
      const body = bodyBuffer(req.body);
      const forwarder = ctx.topology.protobufForwarder;
      if (proto && forwarder !== undefined) {
        // Cluster mode: the body goes on as it is when it can, its IDs decoded by the holders only.
        const h = peekImportHeader(body);
        checkTarget(h.index, h.field, index, field);
        checkShard(h.shard);
        const format = type === 'int' ? 'values' : 'bits';
        if (await forwarder.forwardProtobuf({ index, field, shard: h.shard, clear, format, encoded: body }))
          return done(reply, proto);
      }
      if (type === 'int') {
        const v = proto ? await decodeImportValueRequestAsync(body) : valuesFromJson(jsonBody(req.body));
        checkTarget(v.index, v.field, index, field);
        if (v.shard !== undefined) checkShard(v.shard);
        await ctx.imports.importValues({ ...v, index, field, clear });
      } else {
        const b = proto ? await decodeImportRequestAsync(body) : bitsFromJson(jsonBody(req.body));
        checkTarget(b.index, b.field, index, field);
        if (b.shard !== undefined) checkShard(b.shard);
        await ctx.imports.importBits({ ...b, index, field, clear });
      }
      return done(reply, proto);
    },
  );

  app.post<{ Params: Params & { shard: string }; Querystring: Record<string, string> }>(
    '/index/:index/field/:field/import-roaring/:shard',
    async (req, reply) => {
      for (const k of Object.keys(req.query)) if (k !== 'clear' && k !== 'remote') throw notValidArgument(k);
      const shard = parseShard(req.params.shard);
      importEncoding(req.headers['content-type'], false);
      const r = decodeImportRoaringRequest(bodyBuffer(req.body));
      await ctx.imports.importRoaring({
        index: req.params.index,
        field: req.params.field,
        shard,
        clear: r.clear || boolArg(req.query.clear),
        views: r.views.map((v) => ({
          view: v.name === '' ? STANDARD_VIEW : `${STANDARD_VIEW}_${v.name}`,
          data: v.data,
        })),
      });
      return done(reply, isProtobuf(req.headers['content-type']));
    },
  );
  // Clients probe import-roaring support with GET.
  app.get('/index/:index/field/:field/import-roaring/:shard', async (_req, reply) =>
    sendError(reply, 405, 'method not allowed', 'admin'),
  );
}

function done(reply: FastifyReply, proto: boolean): FastifyReply {
  return proto ? reply.code(200).send() : sendJson(reply, SUCCESS);
}

function checkTarget(bodyIndex: string, bodyField: string, index: string, field: string): void {
  if (bodyIndex !== '' && bodyIndex !== index)
    throw badRequest(`request body names index ${bodyIndex} but the path names ${index}`);
  if (bodyField !== '' && bodyField !== field)
    throw badRequest(`request body names field ${bodyField} but the path names ${field}`);
}

type JsonImport = Record<string, unknown>;

function lowerKeys(body: unknown): JsonImport {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('import body must be a JSON object');
  const out: JsonImport = {};
  for (const [k, v] of Object.entries(body)) out[k.toLowerCase()] = v;
  return out;
}

function numList(v: unknown, name: string): Float64Array {
  if (v === undefined || v === null) return new Float64Array(0);
  if (!Array.isArray(v)) throw badRequest(`${name} must be an array`);
  const out = new Float64Array(v.length);
  v.forEach((x, i) => {
    const n = typeof x === 'string' && /^\d+$/.test(x) ? Number(x) : x;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
      throw badRequest(`${name}[${i}] must be an unsigned integer below 2^53`);
    out[i] = n;
  });
  return out;
}

/**
 * Column IDs: any uint64. Numbers (and digit strings, which parseJson makes of integers too long
 * for a double) up to 2^53−1 give a Float64Array as before; one larger turns the list into a
 * BigUint64Array, exact.
 */
function columnList(v: unknown, name: string): WideIdArray {
  if (!Array.isArray(v) || !v.some((x) => typeof x === 'string' && x.length > 15)) return numList(v, name);
  return BigUint64Array.from(v, (x, i) => {
    const b =
      typeof x === 'string' && /^\d{1,20}$/.test(x)
        ? BigInt(x)
        : typeof x === 'number' && Number.isSafeInteger(x)
          ? BigInt(x)
          : -1n;
    if (b < 0n || b > MAX_COLUMN_ID)
      throw badRequest(`${name}[${i}] must be an unsigned integer up to ${MAX_COLUMN_ID}`);
    return b;
  });
}

function strList(v: unknown, name: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
    throw badRequest(`${name} must be an array of strings`);
  return v as string[];
}

function bigList(v: unknown, name: string): BigInt64Array {
  if (!Array.isArray(v)) throw badRequest(`${name} must be an array`);
  return BigInt64Array.from(v.map((x, i) => int64(x, `${name}[${i}]`)));
}

function optShard(o: JsonImport): number | undefined {
  if (o.shard === undefined) return undefined;
  if (typeof o.shard !== 'number' || !Number.isSafeInteger(o.shard) || o.shard < 0)
    throw badRequest('shard must be an unsigned integer');
  return o.shard;
}

function bitsFromJson(body: unknown): Omit<BitsImport, 'clear'> {
  const o = lowerKeys(body ?? {});
  for (const k of Object.keys(o))
    if (!['index', 'field', 'shard', 'rowids', 'columnids', 'timestamps', 'rowkeys', 'columnkeys'].includes(k))
      throw badRequest(`unknown key: ${k}`);
  return {
    index: typeof o.index === 'string' ? o.index : '',
    field: typeof o.field === 'string' ? o.field : '',
    shard: optShard(o),
    rowIds: numList(o.rowids, 'rowIDs'),
    columnIds: columnList(o.columnids, 'columnIDs'),
    timestamps: o.timestamps === undefined || o.timestamps === null ? null : bigList(o.timestamps, 'timestamps'),
    rowKeys: strList(o.rowkeys, 'rowKeys'),
    columnKeys: strList(o.columnkeys, 'columnKeys'),
  };
}

function valuesFromJson(body: unknown): Omit<ValuesImport, 'clear'> {
  const o = lowerKeys(body ?? {});
  for (const k of Object.keys(o))
    if (!['index', 'field', 'shard', 'columnids', 'values', 'columnkeys'].includes(k))
      throw badRequest(`unknown key: ${k}`);
  return {
    index: typeof o.index === 'string' ? o.index : '',
    field: typeof o.field === 'string' ? o.field : '',
    shard: optShard(o),
    columnIds: columnList(o.columnids, 'columnIDs'),
    values: o.values === undefined ? new BigInt64Array(0) : bigList(o.values, 'values'),
    columnKeys: strList(o.columnkeys, 'columnKeys'),
  };
}
