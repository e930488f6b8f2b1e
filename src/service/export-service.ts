// GET /export: the standard view of one shard as `row,column` CSV lines, ascending by row then
// column, keys instead of IDs where the field or index uses them. The rows are copied out of the
// state in one read (4 bytes a bit, a fraction of the text), and the text is produced from those
// copies in pieces, so a large shard's CSV is written in slices (http/answer-writer.ts) and
// never exists as one string.
import { fieldNotFoundNamed, indexNotFoundNamed } from '../domain/messages.js';
import { STANDARD_VIEW } from '../domain/names.js';
import { columnIdOf, MAX_SAFE_SHARD, SHARD_WIDTH } from '../domain/shard.js';
import type { Engine } from '../engine/engine.js';
import type { ReadonlyHolder } from '../state/readonly.js';

/** Lines per piece of the CSV. */
const PIECE_LINES = 4096;

interface KeyNames {
  key(id: number): string | undefined;
}

/** One shard's rows of a field, copied out of the state: what the CSV is written from. */
export interface ExportRows {
  shard: number;
  rows: { label: string; columns: Uint32Array }[];
  columnKeys: KeyNames | undefined;
  /** The number of lines (bits). */
  lines: number;
}

export class ExportService {
  constructor(private readonly engine: Engine) {}

  /** The CSV as one string (a cluster member's answer to another). */
  async csv(index: string, field: string, shard: number): Promise<string> {
    return [...csvPieces(await this.rows(index, field, shard))].join('');
  }

  /** The shard's rows, copied in one read of the state. */
  rows(index: string, field: string, shard: number): Promise<ExportRows> {
    return this.engine.read((h) => exportRows(h, index, field, shard));
  }
}

function exportRows(h: ReadonlyHolder, index: string, field: string, shard: number): ExportRows {
  const idx = h.index(index);
  if (!idx) throw indexNotFoundNamed(index);
  const f = idx.field(field);
  if (!f) throw fieldNotFoundNamed(field);
  const columnKeys = idx.options.keys ? idx.columnKeys : undefined;
  const out: ExportRows = { shard, rows: [], columnKeys, lines: 0 };
  const frag = f.view(STANDARD_VIEW)?.fragment(shard);
  if (!frag) return out;
  const rowKeys = f.options.keys ? idx.rowKeys.get(field) : undefined;
  for (const row of frag.rowIds()) {
    const columns = frag.peekRow(row)?.toUint32Array() ?? new Uint32Array(0);
    const label = rowKeys === undefined ? String(row) : csvField(rowKeys.key(row) ?? String(row));
    out.rows.push({ label, columns });
    out.lines += columns.length;
  }
  return out;
}

/** The CSV text of `rows`, PIECE_LINES lines a piece. */
export function* csvPieces({ shard, rows, columnKeys }: ExportRows): Generator<string> {
  const base = shard * SHARD_WIDTH;
  for (const { label, columns } of rows) {
    for (let from = 0; from < columns.length; from += PIECE_LINES) {
      let piece = '';
      for (const off of columns.subarray(from, from + PIECE_LINES)) {
        // Above 2^53−1 (shards past MAX_SAFE_SHARD) the ID is printed exact from a bigint.
        const col = shard <= MAX_SAFE_SHARD ? base + off : columnIdOf(shard, off);
        const name =
          typeof col === 'bigint' || columnKeys === undefined
            ? String(col)
            : csvField(columnKeys.key(col) ?? String(col));
        piece += `${label},${name}\n`;
      }
      yield piece;
    }
  }
}

/** Go's encoding/csv quoting (Pilosa writes keys with csv.Writer). */
function csvField(s: string): string {
  if (s === '' || !(/[",\r\n]/.test(s) || s.startsWith(' ') || s.startsWith('\t'))) return s;
  return `"${s.replace(/"/g, '""')}"`;
}
