// Legacy PQL at the service boundary: rewrite 0.x calls (Bitmap, SetBit, frame=…) into current
// ones with the index's labels and int-field names, before the executor sees the query.
import { badRequest } from '../../domain/errors.js';
import type { Query } from '../../pql/ast.js';
import { LegacyQueryError, hasLegacyCall, rewriteLegacy } from '../../pql/legacy.js';
import { legacyNames } from './legacy-meta.js';
import type { ReadonlyHolder } from '../../state/readonly.js';

/**
 * Reads the holder synchronously (labels only), so it may run outside engine.read: the rewrite
 * itself neither awaits nor changes state.
 */
export function rewriteLegacyQuery(holder: ReadonlyHolder, index: string, query: Query): Query {
  if (!hasLegacyCall(query)) return query;
  try {
    return rewriteLegacy(query, legacyNames(holder.index(index)));
  } catch (err) {
    if (err instanceof LegacyQueryError) throw badRequest(`executing: ${err.message}`);
    throw err;
  }
}
