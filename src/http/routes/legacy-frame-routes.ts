// Legacy (0.5–0.10) frame API: frames, their int fields and time quanta, and 0.x index options on
// POST /index/{i}. Mutating calls answer `{}` as 0.x did. The time-quantum routes are PATCH in
// 0.x's router and POST in its docs' examples: both are served.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { badRequest } from '../../domain/errors.js';
import { parseIndexOptions } from '../../service/schema-service.js';
import { parseFrameBody, parseIntField, quantum } from '../../service/legacy/frame-options.js';
import { jsonBody } from '../../encoding/json-body.js';
import type { HttpContext } from '../context.js';
import { sendJson } from '../reply.js';
import { onEachRoute } from '../route-options.js';

type IndexParams = { index: string };
type FrameParams = { index: string; frame: string };
type FieldParams = FrameParams & { field: string };

const EMPTY = {};

export function legacyFrameRoutes(app: FastifyInstance, ctx: HttpContext): void {
  const frames = ctx.topology.frames;

  app.post<{ Params: FrameParams }>('/index/:index/frame/:frame', async (req, reply) => {
    await frames.createFrame(req.params.index, req.params.frame, parseFrameBody(jsonBody(req.body)));
    return sendJson(reply, EMPTY);
  });
  app.delete<{ Params: FrameParams }>('/index/:index/frame/:frame', async (req, reply) => {
    await frames.deleteFrame(req.params.index, req.params.frame);
    return sendJson(reply, EMPTY);
  });

  const indexQuantum = async (
    req: FastifyRequest<{ Params: IndexParams }>,
    reply: FastifyReply,
  ): Promise<FastifyReply> => {
    await frames.setIndexTimeQuantum(req.params.index, timeQuantumBody(jsonBody(req.body)));
    return sendJson(reply, EMPTY);
  };
  app.patch('/index/:index/time-quantum', indexQuantum);
  app.post('/index/:index/time-quantum', indexQuantum);

  const frameQuantum = async (
    req: FastifyRequest<{ Params: FrameParams }>,
    reply: FastifyReply,
  ): Promise<FastifyReply> => {
    await frames.setFrameTimeQuantum(req.params.index, req.params.frame, timeQuantumBody(jsonBody(req.body)));
    return sendJson(reply, EMPTY);
  };
  app.patch('/index/:index/frame/:frame/time-quantum', frameQuantum);
  app.post('/index/:index/frame/:frame/time-quantum', frameQuantum);

  app.post<{ Params: FieldParams }>('/index/:index/frame/:frame/field/:field', async (req, reply) => {
    await frames.createFrameField(
      req.params.index,
      req.params.frame,
      parseIntField(jsonBody(req.body), true, req.params.field),
    );
    return sendJson(reply, EMPTY);
  });
  app.delete<{ Params: FieldParams }>('/index/:index/frame/:frame/field/:field', async (req, reply) => {
    await frames.deleteFrameField(req.params.index, req.params.frame, req.params.field);
    return sendJson(reply, EMPTY);
  });
  app.get<{ Params: FrameParams }>('/index/:index/frame/:frame/fields', async (req, reply) => {
    const fields = await frames.frameFields(req.params.index, req.params.frame);
    return sendJson(reply, { fields: fields.map((f) => ({ name: f.name, type: f.type, min: f.min, max: f.max })) });
  });
}

/**
 * 0.5–0.8 clients create indexes with {options:{columnLabel, timeQuantum}}, which the current
 * POST /index/{i} (schema-routes.ts) refuses as unknown keys: a route option of that route takes
 * exactly those requests over, before its handler.
 */
export function legacyIndexOptions(app: FastifyInstance, ctx: HttpContext): void {
  const frames = ctx.topology.frames;
  const takeOver = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const legacy = legacyIndexBody(jsonBody(req.body));
    if (legacy === undefined) return;
    await frames.createLegacyIndex((req.params as IndexParams).index, legacy.options, legacy);
    return sendJson(reply, EMPTY);
  };
  onEachRoute(app, (route, add) => {
    if (route.url === '/index/:index' && route.methods.includes('POST')) add('preHandler', takeOver);
  });
}

function timeQuantumBody(body: unknown): string {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('request body must be a JSON object with timeQuantum');
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) if (k !== 'timeQuantum') throw badRequest(`Unknown key: ${k}`);
  if (b.timeQuantum === undefined) throw badRequest('timeQuantum is required');
  return quantum(b.timeQuantum);
}

/** `{options:{columnLabel?, timeQuantum?, keys?, trackExistence?}}` with a 0.x key, else undefined. */
function legacyIndexBody(
  body: unknown,
): { options: ReturnType<typeof parseIndexOptions>; columnLabel?: string; timeQuantum?: string } | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const o = (body as { options?: unknown }).options;
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return undefined;
  const { columnLabel, timeQuantum, ...current } = o as Record<string, unknown>;
  if (columnLabel === undefined && timeQuantum === undefined) return undefined;
  if (columnLabel !== undefined && typeof columnLabel !== 'string') throw badRequest('columnLabel must be a string');
  return {
    options: parseIndexOptions({ ...(body as object), options: current }),
    ...(columnLabel !== undefined && columnLabel !== '' ? { columnLabel } : {}),
    ...(timeQuantum !== undefined ? { timeQuantum: quantum(timeQuantum) } : {}),
  };
}
