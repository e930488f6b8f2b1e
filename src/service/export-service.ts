// GET /export: the standard view of one shard as `row,column` CSV lines, ascending by row then
// column, keys instead of IDs where the field or index uses them.
import { fieldNotFoundNamed, indexNotFoundNamed } from '../domain/messages.js';
import { STANDARD_VIEW } from '../domain/names.js';
import { columnIdOf, MAX_SAFE_SHARD, SHARD_WIDTH } from '../domain/shard.js';
import type { Engine } from '../engine/engine.js';
import type { ReadonlyHolder } from '../state/readonly.js';

export class ExportService {
  constructor(private readonly engine: Engine) {}

  csv(index: string, field: string, shard: number): Promise<string> {
    return this.engine.read((h) => exportCsv(h, index, field, shard));
  }
}

function exportCsv(h: ReadonlyHolder, index: string, field: string, shard: number): string {
  const idx = h.index(index);
  if (!idx) throw indexNotFoundNamed(index);
  const f = idx.field(field);
  if (!f) throw fieldNotFoundNamed(field);
  const frag = f.view(STANDARD_VIEW)?.fragment(shard);
  if (!frag) return '';
  const rowKeys = f.options.keys ? idx.rowKeys.get(field) : undefined;
  const colKeys = idx.options.keys ? idx.columnKeys : undefined;
  const base = shard * SHARD_WIDTH;
  const lines: string[] = [];
  for (const row of frag.rowIds()) {
    const r = rowKeys === undefined ? String(row) : csvField(rowKeys.key(row) ?? String(row));
    for (const off of frag.peekRow(row)!) {
      // Above 2^53−1 (shards past MAX_SAFE_SHARD) the ID is printed exact from a bigint.
      const col = shard <= MAX_SAFE_SHARD ? base + off : columnIdOf(shard, off);
      if (typeof col === 'bigint') {
        lines.push(`${r},${col}\n`);
        continue;
      }
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
