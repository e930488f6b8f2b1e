import type { FastifyReply } from 'fastify';
import { stringify, type Jsonish } from '../encoding/json.js';

/** Replies with exact-integer JSON and Pilosa's trailing newline. */
export function sendJson(reply: FastifyReply, body: Jsonish, status = 200): FastifyReply {
  return reply
    .code(status)
    .type('application/json')
    .send(stringify(body) + '\n');
}

export const SUCCESS = { success: true };
