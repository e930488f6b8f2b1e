// A request body (the Buffer every route receives) as JSON: shared by the HTTP routes and the
// Kafka routes, which register beside them from src/app.ts and must not import http/.
import { badRequest } from '../domain/errors.js';
import { parseJson } from './json.js';

/** JSON body or undefined when empty. Bad JSON → 400. */
export function jsonBody(body: unknown): unknown {
  const text = Buffer.isBuffer(body) ? body.toString('utf8').trim() : '';
  if (text === '') return undefined;
  try {
    return parseJson(text);
  } catch (err) {
    throw badRequest(`invalid JSON body: ${(err as Error).message}`);
  }
}
