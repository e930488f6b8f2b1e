// One error handler: DomainError codes → statuses, rendered in Pilosa's body shapes.
// Query routes answer {"error":msg}; admin routes {"success":false,"error":{"message":msg}}.
// Anything else is a bug: 500, logged, and — for broken invariants — the process is stopped.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type ErrorCode } from '../domain/errors.js';
import { AssertionError } from '../util/assert.js';

const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  method_not_allowed: 405,
  not_acceptable: 406,
  too_large: 413,
  unsupported_media: 415,
  unavailable: 503,
  insufficient_storage: 507,
};

/** The HTTP status of a DomainError, the same whether the answer is JSON or protobuf. */
export function statusOf(err: DomainError): number {
  return STATUS[err.code];
}

export type ErrorShape = 'query' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    errorShape?: ErrorShape;
  }
}

export function sendError(
  reply: FastifyReply,
  status: number,
  message: string,
  shape: ErrorShape,
  /** DomainError.reason: a stable code beside the message (Pilosa's bodies have none, so only when set). */
  reason?: string,
): FastifyReply {
  return reply
    .code(status)
    .type('application/json')
    .send(errorBody(message, shape, reason));
}

/** An error's body in its route's shape, with Pilosa's trailing newline. */
export function errorBody(message: string, shape: ErrorShape, reason?: string): string {
  const code = reason === undefined ? {} : { code: reason };
  const body = shape === 'query' ? { error: message, ...code } : { success: false, error: { message, ...code } };
  return JSON.stringify(body) + '\n';
}

/** Where an internal error is logged: the request's logger (fastify's req.log) or the server's. */
interface ErrorLog {
  error(obj: object, msg: string): void;
}

/**
 * The steps of an internal error (a bug), whichever way the request was answered (this handler,
 * or the lean query path): logged, the process stopped for a broken invariant, and the 500 body
 * in the route's shape. `reqId` for a logger that does not carry it already.
 */
export function internalError(
  err: Error,
  log: ErrorLog,
  onInvariantBroken: (err: Error) => void,
  shape: ErrorShape,
  reqId?: string,
): string {
  log.error(reqId === undefined ? { err } : { err, reqId }, 'internal error');
  if (err instanceof AssertionError) onInvariantBroken(err);
  return errorBody(`internal error: ${err.message}`, shape);
}

export function installErrorHandler(app: FastifyInstance, onInvariantBroken: (err: Error) => void): void {
  app.setErrorHandler((err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) => {
    const shape: ErrorShape = req.routeOptions.config?.errorShape ?? 'admin';
    if (err instanceof DomainError) return sendError(reply, STATUS[err.code], err.message, shape, err.reason);
    const fe = err as FastifyError;
    if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendError(reply, 413, 'request body too large', shape);
    if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return sendError(reply, 415, 'unsupported media type', shape);
    if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500)
      return sendError(reply, fe.statusCode, err.message, shape);
    return reply
      .code(500)
      .type('application/json')
      .send(internalError(err, req.log, onInvariantBroken, shape));
  });
  app.setNotFoundHandler((req, reply) => sendError(reply, 404, `not found: ${req.method} ${req.url}`, 'admin'));
}
