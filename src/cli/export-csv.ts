// `bitledger export --url U -i INDEX -f FIELD [-o FILE]`: the field's standard view as
// `row,column` CSV (GET /export, one shard at a time), to a file or stdout.
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { ConfigError } from '../config/config.js';
import { HttpTarget } from './http-target.js';

export interface ExportCsvOptions {
  url: string;
  index: string;
  field: string;
  /** Absent or "-": stdout. */
  output?: string;
}

export async function exportCsv(opts: ExportCsvOptions): Promise<{ shards: number; bytes: number }> {
  const target = new HttpTarget(opts.url);
  if ((await target.field(opts.index, opts.field)) === undefined)
    throw new ConfigError(`export: field ${opts.index}/${opts.field} does not exist`);
  const max =
    (await target.json<{ standard: Record<string, number> }>('GET', '/internal/shards/max')).standard[opts.index] ?? 0;
  const toFile = opts.output !== undefined && opts.output !== '-';
  const out: NodeJS.WritableStream = toFile ? createWriteStream(opts.output!) : process.stdout;
  let bytes = 0;
  for (let shard = 0; shard <= max; shard++) {
    const q = new URLSearchParams({ index: opts.index, field: opts.field, shard: String(shard) });
    const text = await (await target.request('GET', `/export?${q}`, undefined, undefined, 'text/csv')).text();
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  if (toFile) {
    out.end();
    await finished(out);
  }
  return { shards: max + 1, bytes };
}
