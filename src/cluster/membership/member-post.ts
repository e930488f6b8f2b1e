// A JSON POST to another member over a kept-alive connection: the read fan-out's calls (one per
// member a query needs) are on every query's path, and fetch() costs about 0.3 ms more a call than
// node:http (0.43 against 0.14 ms at p50 between two processes on the bench machine). An answer
// read whole goes through member-connection.ts (less CPU a call still); one read as it arrives
// (a big answer's binary partials), through node:http.
import { Agent, type IncomingMessage, request } from 'node:http';

/** Connections to the members, kept open between calls. */
const AGENT = new Agent({ keepAlive: true });

/** POSTs `body` (JSON text) to `url`, the whole answer read (member-connection.ts). */
export { postMember as postJson } from './member-connection.js';

/** A member's answer as it arrives: its body is read by the caller (a large one, a piece at a time). */
export interface StreamAnswer {
  status: number;
  contentType: string;
  body: AsyncIterable<Uint8Array>;
}

/** POSTs `body` (JSON text) like postJson, resolving once the answer's head has arrived. */
export function postStream(
  url: string,
  body: string,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<StreamAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent: AGENT,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        ...(signal === undefined ? {} : { signal }),
      },
      (res: IncomingMessage) =>
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: res }),
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Whether a node:http failure means the member could not be reached (its code is on the error itself). */
export function postUnreachable(err: unknown): { unreachable: boolean; refused: boolean } {
  const code = (err as { code?: unknown } | null)?.code;
  const c = typeof code === 'string' ? code : '';
  return {
    unreachable: /^(ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|EPIPE)$/.test(c),
    refused: c === 'ECONNREFUSED',
  };
}
