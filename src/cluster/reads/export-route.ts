// GET /export of one shard in cluster mode: the shard's data lives on its partition's holders,
// so a node that is not one of them (or has not caught up) would answer an incomplete CSV. The
// export is taken from a caught-up holder instead (this node first), once that holder has
// applied everything acknowledged before the request: the same answer a single node gives.
import { DomainError } from '../../domain/errors.js';
import type { ClusterView } from '../types.js';

/** The query arguments members add when they ask each other (this node's own CSV, after waiting). */
export const EXPORT_LOCAL_ARG = 'local';
export const EXPORT_WAIT_ARG = 'waitFor';

const WAIT_MS = 30_000;

export async function clusterExport(
  view: ClusterView,
  req: { index: string; field: string; shard: number; local?: boolean; waitFor?: string },
  localCsv: () => Promise<string>,
): Promise<string> {
  const p = view.partitionOf(req.index, req.shard);
  if (req.local === true) {
    if (req.waitFor !== undefined) await view.waitApplied('log', p, req.waitFor, AbortSignal.timeout(WAIT_MS));
    return localCsv();
  }
  const end = (await view.logEndOffsets([p])).get(p) ?? '0';
  for (const m of view.holders(p)) {
    if (m.id === view.self.id) {
      try {
        await view.waitApplied('log', p, end, AbortSignal.timeout(WAIT_MS));
        return await localCsv();
      } catch (err) {
        if (err instanceof DomainError && err.code === 'unavailable') continue;
        throw err;
      }
    }
    const q = new URLSearchParams({
      index: req.index,
      field: req.field,
      shard: String(req.shard),
      [EXPORT_LOCAL_ARG]: 'true',
      [EXPORT_WAIT_ARG]: end,
    });
    const res = await view
      .memberFetch(`${m.url}/export?${q}`, {
        headers: { accept: 'text/csv' },
        signal: AbortSignal.timeout(WAIT_MS),
      })
      .catch(() => undefined);
    if (res === undefined || res.status >= 500) continue; // down or not holding: the next holder
    const body = await res.text();
    if (res.ok) return body;
    throw new DomainError(res.status === 404 ? 'not_found' : 'bad_request', errorText(body));
  }
  throw new DomainError('unavailable', `cluster: no node holding shard ${req.shard} of index ${req.index} answered`);
}

function errorText(body: string): string {
  try {
    const j = JSON.parse(body) as { error?: { message?: string } | string };
    return typeof j.error === 'string' ? j.error : (j.error?.message ?? body);
  } catch {
    return body;
  }
}
