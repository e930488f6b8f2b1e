// Internal endpoints Pilosa client libraries call: key translation, shard owners, max shards.
import type { FastifyInstance } from 'fastify';
import { DomainError, badRequest, notFound } from '../../domain/errors.js';
import { INVERSE_VIEW } from '../../domain/names.js';
import { decodeTranslateKeysRequest, encodeTranslateKeysResponse } from '../../encoding/public-proto.js';
import { assignKeys } from '../../service/key-assign.js';
import type { Holder } from '../../state/holder.js';
import { KeyTranslator } from '../../state/keys.js';
import { bodyBuffer, isProtobuf } from '../body.js';
import type { HttpContext } from '../context.js';
import { sendJson } from '../reply.js';
import { nodeJson } from './legacy-node-json.js';

type Query = Record<string, string>;

export function internalRoutes(app: FastifyInstance, ctx: HttpContext): void {
  // TranslateKeysRequest → TranslateKeysResponse; unknown keys get new IDs (one KeysAssigned).
  app.post('/internal/translate/keys', async (req, reply) => {
    if (!isProtobuf(req.headers['content-type'])) throw new DomainError('unsupported_media', 'Unsupported media type');
    if (!acceptsProtobuf(req.headers.accept)) throw new DomainError('not_acceptable', 'Not acceptable');
    const r = decodeTranslateKeysRequest(bodyBuffer(req.body));
    // Known keys only need a read (so a read-only replica can answer them); new ones a write.
    const known = await ctx.engine.read((h) => {
      const t = translatorOf(h, r.index, r.field);
      const out = r.keys.map((k) => t.id(k));
      return out.every((id) => id !== undefined) ? (out as number[]) : undefined;
    });
    const ids = known ?? Array.from(await ctx.engine.write((h, sink) => assignKeys(translatorOf(h, r.index, r.field), r.keys, sink, r.index, r.field)));
    return reply.code(200).type('application/x-protobuf').send(Buffer.from(encodeTranslateKeysResponse(ids)));
  });

  // The owners of a shard: always this node.
  app.get<{ Querystring: Query }>('/internal/fragment/nodes', { config: { errorShape: 'query' } }, async (req, reply) => {
    checkArgs(req.query, ['index', 'shard'], []);
    parseUint(req.query.shard, 'shard');
    return sendJson(reply, [nodeJson(ctx)]);
  });

  // Pilosa registers this route's validator under a misspelt name: any argument is accepted.
  app.get('/internal/shards/max', async (_req, reply) => sendJson(reply, { standard: await ctx.engine.read(maxShards) }));
}

/** Column keys (field '') or a field's row keys: unknown index/field → 404, no keys configured → 400. */
function translatorOf(h: Holder, index: string, field: string): KeyTranslator {
  const idx = h.index(index);
  if (!idx) throw notFound(`index not found: ${index}`);
  if (field === '') {
    if (!idx.options.keys) throw badRequest(`index ${index} does not use string keys`);
    return idx.columnKeys;
  }
  const f = idx.field(field);
  if (!f) throw notFound(`field not found: ${field}`);
  if (!f.options.keys) throw badRequest(`field ${field} does not use string keys`);
  return idx.rowKeys.get(field) ?? EMPTY_KEYS;
}

/** Until a field's first key is assigned its translator does not exist; reads see this empty one. */
const EMPTY_KEYS = new KeyTranslator();

/** Highest shard holding data, per index by name; 0 for an empty index. */
export function maxShards(h: Holder, inverse = false): { [index: string]: number } {
  const out: { [index: string]: number } = {};
  for (const idx of h.sortedIndexes()) {
    // The shards of a 0.x inverse view number rows, not columns: they count apart.
    let max = 0;
    for (const f of idx.fields.values()) {
      for (const [name, v] of f.views) if ((name === INVERSE_VIEW) === inverse) for (const s of v.fragments.keys()) if (s > max) max = s;
    }
    out[idx.name] = max;
  }
  return out;
}

/** Pilosa's query-argument validator: unknown → "x is not a valid argument", missing → "x is required". */
export function checkArgs(q: Query, required: string[], optional: string[]): void {
  for (const k of Object.keys(q)) if (!required.includes(k) && !optional.includes(k)) throw badRequest(`${k} is not a valid argument`);
  for (const k of required) if (q[k] === undefined || q[k] === '') throw badRequest(`${k} is required`);
}

export function parseUint(v: string | undefined, what: string): number {
  if (v === undefined || !/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw badRequest(`${what} should be an unsigned integer`);
  return Number(v);
}

/** No Accept header, a wildcard, or protobuf (Pilosa clients send application/x-protobuf). */
function acceptsProtobuf(accept: string | undefined): boolean {
  return accept === undefined || accept === '' || /application\/(x-)?protobuf|\*\/\*/i.test(accept);
}
