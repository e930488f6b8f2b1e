// GET /internal/cluster/result?topic=meta|log&partition=P&offset=O: the outcome of the command
// whose last message is at O, once this node has applied it (waiting a bounded time). A command
// that failed answers with its original status and message; the coordinator passes them on.
import type { FastifyInstance } from 'fastify';
import { DomainError, badRequest, notFound } from '../../domain/errors.js';
import { stringify, type Jsonish } from '../../encoding/json.js';
import type { CommandResults } from '../commands/results.js';
import type { ClusterTopic } from '../types.js';

export interface ResultRouteParts {
  results: CommandResults;
  /** ClusterView.waitApplied (or the applier's own). */
  waitApplied(topic: ClusterTopic, partition: number, next: string, signal?: AbortSignal): Promise<void>;
  /** How long to wait for the command to be applied here (default 15 s). */
  waitMs?: number;
}

export function clusterResultRoute(app: FastifyInstance, parts: ResultRouteParts): void {
  app.get<{ Querystring: Record<string, string> }>('/internal/cluster/result', async (req, reply) => {
    const { topic, partition, offset } = parseResultQuery(req.query);
    await parts.waitApplied(topic, partition, String(BigInt(offset) + 1n), AbortSignal.timeout(parts.waitMs ?? 15_000));
    const r = parts.results.get(topic, partition, offset);
    if (r === undefined) throw notFound(`cluster: no result kept for ${topic}/${partition}@${offset} on this node`);
    return reply
      .code(r.ok ? 200 : r.status)
      .type('application/json')
      .send(stringify(r as unknown as Jsonish));
  });
}

function parseResultQuery(q: Record<string, string>): { topic: ClusterTopic; partition: number; offset: string } {
  const { topic, partition, offset } = q;
  if (topic !== 'meta' && topic !== 'log') throw badRequest('topic must be meta or log');
  if (partition === undefined || !/^\d{1,9}$/.test(partition))
    throw badRequest('partition must be an unsigned integer');
  if (offset === undefined || !/^\d{1,19}$/.test(offset)) throw badRequest('offset must be an unsigned integer');
  return { topic, partition: Number(partition), offset };
}

/** Asks `base` (a member's URL) for a command's result; undefined when that node cannot answer. */
export async function fetchResult(
  memberFetch: (url: string, init?: RequestInit) => Promise<Response>,
  base: string,
  topic: ClusterTopic,
  partition: number,
  offset: string,
  signal: AbortSignal,
): Promise<{ ok: true; value: unknown } | { ok: false; error: DomainError } | undefined> {
  let res: Response;
  try {
    res = await memberFetch(`${base}/internal/cluster/result?topic=${topic}&partition=${partition}&offset=${offset}`, {
      signal,
    });
  } catch {
    return undefined;
  }
  const text = await res.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null || !('ok' in body)) return undefined;
  const b = body as { ok: boolean; value?: unknown; code?: string; message?: string };
  if (b.ok) return { ok: true, value: b.value };
  return { ok: false, error: new DomainError((b.code ?? 'bad_request') as DomainError['code'], b.message ?? '') };
}
