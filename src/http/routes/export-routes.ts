// GET /export?index=&field=&shard= (Accept: text/csv): the CSV of service/export-service.ts.
// 0.x clients send frame/slice/view instead of field/shard; both are accepted.
import type { FastifyInstance } from 'fastify';
import { DomainError, badRequest } from '../../domain/errors.js';
import { STANDARD_VIEW } from '../../domain/names.js';
import { parseShard } from '../../domain/shard.js';
import { csvPieces, ExportService } from '../../service/export-service.js';
import { SLICED_FROM_BYTES, sendSliced } from '../answer-writer.js';
import type { HttpContext } from '../context.js';
import { checkArgs } from './internal-routes.js';

type Query = Record<string, string>;

/** The shortest CSV line (`r,c\n`): a lower bound of the answer's size. */
const MIN_LINE_BYTES = 4;

export function exportRoutes(app: FastifyInstance, ctx: HttpContext): void {
  const exports = new ExportService(ctx.engine);
  app.get<{ Querystring: Query }>('/export', { config: { errorShape: 'query' } }, async (req, reply) => {
    const { local, waitFor, ...q } = legacyArgs(req.query);
    // Cluster mode: members ask each other with these two (this node's own CSV, after waiting).
    const members = ctx.topology.exportsThroughMembers;
    checkArgs(members ? q : { ...q, ...definedArgs({ local, waitFor }) }, ['index', 'field', 'shard'], ['view']);
    if (q.view !== undefined && q.view !== STANDARD_VIEW)
      throw badRequest(`only the ${STANDARD_VIEW} view can be exported`);
    if (!acceptsCsv(req.headers.accept)) throw new DomainError('not_acceptable', 'Not acceptable');
    const shard = parseShard(q.shard);
    if (!members) {
      const rows = await exports.rows(q.index, q.field, shard);
      // A large shard's CSV goes out in slices, from the rows copied in one read.
      if (rows.lines * MIN_LINE_BYTES >= SLICED_FROM_BYTES) {
        await sendSliced(reply, 'text/csv', csvPieces(rows));
        return reply;
      }
      return reply
        .code(200)
        .type('text/csv')
        .send([...csvPieces(rows)].join(''));
    }
    const own = (): Promise<string> => exports.csv(q.index, q.field, shard);
    const csv = await ctx.topology.exportShard(
      { index: q.index, field: q.field, shard, local: local === 'true', waitFor },
      own,
    );
    return reply.code(200).type('text/csv').send(csv);
  });
}

/** The arguments that were given (for the argument check outside cluster mode). */
function definedArgs(q: Record<string, string | undefined>): Query {
  const out: Query = {};
  for (const [k, v] of Object.entries(q)) if (v !== undefined) out[k] = v;
  return out;
}

/** 0.x names → current ones (an argument given under both names is refused by checkArgs). */
function legacyArgs(q: Query): Query {
  const out: Query = {};
  for (const [k, v] of Object.entries(q)) out[k === 'frame' ? 'field' : k === 'slice' ? 'shard' : k] = v;
  return out;
}

function acceptsCsv(accept: string | undefined): boolean {
  return accept !== undefined && accept.split(',').some((t) => t.split(';')[0].trim().toLowerCase() === 'text/csv');
}
