// GET /export?index=&field=&shard= (Accept: text/csv): the standard view of one shard as
// `row,column` lines, ascending by row then column, keys instead of IDs where the field or index
// uses them. 0.x clients send frame/slice/view instead of field/shard; both are accepted.
import type { FastifyInstance } from 'fastify';
import { DomainError, badRequest, notFound } from '../../domain/errors.js';
import { STANDARD_VIEW } from '../../domain/names.js';
import { SHARD_WIDTH, parseShard } from '../../domain/shard.js';
import type { Holder } from '../../state/holder.js';
import type { HttpContext } from '../context.js';
import { checkArgs } from './internal-routes.js';

type Query = Record<string, string>;

export function exportRoutes(app: FastifyInstance, ctx: HttpContext): void {
  app.get<{ Querystring: Query }>('/export', { config: { errorShape: 'query' } }, async (req, reply) => {
    const q = legacyArgs(req.query);
    checkArgs(q, ['index', 'field', 'shard'], ['view']);
    if (q.view !== undefined && q.view !== STANDARD_VIEW) throw badRequest(`only the ${STANDARD_VIEW} view can be exported`);
    if (!acceptsCsv(req.headers.accept)) throw new DomainError('not_acceptable', 'Not acceptable');
    const shard = parseShard(q.shard);
    const csv = await ctx.engine.read((h) => exportCsv(h, q.index, q.field, shard));
    return reply.code(200).type('text/csv').send(csv);
  });
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

export function exportCsv(h: Holder, index: string, field: string, shard: number): string {
  const idx = h.index(index);
  if (!idx) throw notFound(`index not found: ${index}`);
  const f = idx.field(field);
  if (!f) throw notFound(`field not found: ${field}`);
  const frag = f.view(STANDARD_VIEW)?.fragment(shard);
  if (!frag) return '';
  const rowKeys = f.options.keys ? idx.rowKeys.get(field) : undefined;
  const colKeys = idx.options.keys ? idx.columnKeys : undefined;
  const base = shard * SHARD_WIDTH;
  const lines: string[] = [];
  for (const row of frag.rowIds()) {
    const r = rowKeys === undefined ? String(row) : csvField(rowKeys.key(row) ?? String(row));
    for (const off of frag.rows.get(row)!) {
      const col = base + off;
      lines.push(`${r},${colKeys === undefined ? col : csvField(colKeys.key(col) ?? String(col))}\n`);
    }
  }
  return lines.join('');
}

/** Go's encoding/csv quoting (Pilosa writes keys with csv.Writer). */
function csvField(s: string): string {
  if (s === '' || !(/[",\r\n]/.test(s) || s.startsWith(' ') || s.startsWith('\t'))) return s;
  return `"${s.replace(/"/g, '""')}"`;
}
