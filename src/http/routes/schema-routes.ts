// GET/POST /schema, GET /index, index and field management (current API).
import type { FastifyInstance } from 'fastify';
import { badRequest, notFound } from '../../domain/errors.js';
import type { FieldOptions, IndexOptions } from '../../domain/types.js';
import { type BitDepths, indexJson, schemaJson } from '../../encoding/schema-json.js';
import { parseFieldOptions } from '../../service/field-options.js';
import { parseFieldBody, parseIndexOptions } from '../../service/schema-service.js';
import { jsonBody } from '../../encoding/json-body.js';
import type { HttpContext } from '../context.js';
import { SUCCESS, sendJson } from '../reply.js';

type IndexParams = { index: string };
type FieldParams = { index: string; field: string };

export function schemaRoutes(app: FastifyInstance, ctx: HttpContext): void {
  // Cluster mode: int fields' bit depths are the largest any member has seen.
  const depths = (): Promise<BitDepths | undefined> => ctx.topology.bitDepths();
  const listing = async (): Promise<ReturnType<typeof schemaJson>> => {
    const d = await depths();
    return ctx.engine.read((h) => schemaJson(h, d));
  };
  app.get('/schema', async (_req, reply) => sendJson(reply, await listing()));
  app.get('/index', async (_req, reply) => sendJson(reply, await listing()));

  app.post('/schema', async (req, reply) => {
    await ctx.schema.applySchema(parseSchemaBody(jsonBody(req.body)));
    return reply.code(204).send();
  });

  app.get<{ Params: IndexParams }>('/index/:index', async (req, reply) => {
    const d = await depths();
    const body = await ctx.engine.read((h) => {
      const idx = h.index(req.params.index);
      if (!idx) throw notFound(`index ${req.params.index} not found`);
      return indexJson(idx, d);
    });
    return sendJson(reply, body);
  });

  app.post<{ Params: IndexParams }>('/index/:index', async (req, reply) => {
    await ctx.schema.createIndex(req.params.index, parseIndexOptions(jsonBody(req.body)));
    return sendJson(reply, SUCCESS);
  });

  app.delete<{ Params: IndexParams }>('/index/:index', async (req, reply) => {
    await ctx.schema.deleteIndex(req.params.index);
    return sendJson(reply, SUCCESS);
  });

  app.post<{ Params: FieldParams }>('/index/:index/field/:field', async (req, reply) => {
    await ctx.schema.createField(req.params.index, req.params.field, parseFieldBody(jsonBody(req.body)));
    return sendJson(reply, SUCCESS);
  });

  app.delete<{ Params: FieldParams }>('/index/:index/field/:field', async (req, reply) => {
    await ctx.schema.deleteField(req.params.index, req.params.field);
    return sendJson(reply, SUCCESS);
  });
}

/** POST /schema body: the GET /schema shape (keys matched case-insensitively, as Pilosa does). */
function parseSchemaBody(
  body: unknown,
): { name: string; options: IndexOptions; fields: { name: string; options: FieldOptions }[] }[] {
  if (body === undefined) return [];
  const b = lower(body, 'schema');
  const list = b.indexes ?? null;
  if (list === null) return [];
  if (!Array.isArray(list)) throw badRequest('decoding request as JSON Pilosa schema: indexes must be an array');
  return list.map((raw: unknown) => {
    const i = lower(raw, 'index');
    if (typeof i.name !== 'string')
      throw badRequest('decoding request as JSON Pilosa schema: index name must be a string');
    const io = i.options === undefined || i.options === null ? {} : lower(i.options, 'index options');
    const options = parseIndexOptions({
      options: { keys: io.keys ?? false, trackExistence: io.trackexistence ?? true },
    });
    const fields = i.fields === undefined || i.fields === null ? [] : i.fields;
    if (!Array.isArray(fields)) throw badRequest('decoding request as JSON Pilosa schema: fields must be an array');
    return {
      name: i.name,
      options,
      fields: fields.map((rf: unknown) => {
        const f = lower(rf, 'field');
        if (typeof f.name !== 'string')
          throw badRequest('decoding request as JSON Pilosa schema: field name must be a string');
        // Listing-only keys (base, bitDepth) are dropped; the rest are ordinary field options.
        const fo = f.options === undefined || f.options === null ? {} : (f.options as Record<string, unknown>);
        const { base: _base, bitDepth: _bitDepth, ...opts } = fo;
        return { name: f.name, options: parseFieldOptions(opts) };
      }),
    };
  });
}

function lower(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw badRequest(`decoding request as JSON Pilosa schema: ${what} must be an object`);
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(v)) out[k.toLowerCase()] = val;
  return out;
}
