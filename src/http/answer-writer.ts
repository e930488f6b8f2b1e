// Large answers written in slices: the pieces of an encoder are gathered into writes of about
// WRITE_BYTES, each handed to the socket, with a return to the event loop after every write and
// a wait for 'drain' whenever the socket's buffer is full, so one large answer never holds the
// process (/status, other queries) for longer than one slice, and never exists as one string or
// buffer. A client that closes the connection ends the encoding: nothing more is produced.
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

/** Answers estimated below this are sent as one body, as before (most answers). */
export const SLICED_FROM_BYTES = 1024 * 1024;
const WRITE_BYTES = 256 * 1024;
const PIECES_PER_SLICE = 64;

export type Piece = string | Uint8Array;

/**
 * Writes the pieces as a chunked 200 answer of `type`. The reply is hijacked: the headers fastify
 * set for it (request id, CORS) are written with it. Resolves when the answer is written or the
 * client is gone.
 */
export async function sendSliced(reply: FastifyReply, type: string, pieces: Iterable<Piece>): Promise<void> {
  reply.hijack();
  const written = await writeSliced(reply.raw, headersOf(reply), type, pieces);
  // The request's metrics and access log (ops-hooks.ts): fastify's onSend never sees this answer.
  if (written !== undefined) reply.answerSent?.(written);
}

/**
 * Writes the pieces as a chunked 200 answer of `type` with `headers` on `res`: the bytes written,
 * or undefined when the client went away first.
 */
export async function writeSliced(
  res: ServerResponse,
  headers: Record<string, string | string[] | number>,
  type: string,
  pieces: Iterable<Piece>,
): Promise<number | undefined> {
  let gone = false;
  const onClose = (): void => {
    gone = true;
  };
  res.once('close', onClose);
  res.writeHead(200, { ...headers, 'content-type': type });
  let pending: Piece[] = [];
  let size = 0;
  let written = 0;
  try {
    for (const piece of pieces) {
      if (gone) return undefined;
      // An empty piece is an encoder's yield point (work done without output, e.g. the sizing
      // pass of a protobuf row): the slice ends there. Small pieces end it at either bound.
      if (piece.length > 0) {
        pending.push(piece);
        size += piece.length;
        if (size < WRITE_BYTES && pending.length < PIECES_PER_SLICE) continue;
      }
      written += size;
      const full = pending.length > 0 && !res.write(joined(pending));
      pending = [];
      size = 0;
      if (full) await drainedOrClosed(res);
      // Always back to the event loop, also after a 'drain': a client that keeps up drains the
      // socket within the write, 'drain' then comes from process.nextTick, and resuming from it
      // alone chained every slice of the answer in the nextTick and microtask queues, holding
      // the loop for the whole answer (measured: /status held 1.5-2 s by one 83 MB JSON answer).
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (gone) return undefined;
    res.end(joined(pending));
    return written + size;
  } finally {
    res.off('close', onClose);
  }
}

function joined(pieces: Piece[]): Piece {
  if (pieces.every((p) => typeof p === 'string')) return (pieces as string[]).join('');
  return Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
}

async function drainedOrClosed(res: ServerResponse): Promise<void> {
  if (res.destroyed) return;
  const ac = new AbortController();
  try {
    await Promise.race([once(res, 'drain', { signal: ac.signal }), once(res, 'close', { signal: ac.signal })]);
  } finally {
    ac.abort();
  }
}

function headersOf(reply: FastifyReply): Record<string, string | string[] | number> {
  const out: Record<string, string | string[] | number> = {};
  for (const [k, v] of Object.entries(reply.getHeaders())) {
    if (v !== undefined && k !== 'content-length') out[k] = v;
  }
  return out;
}
