// Issue 13: `bitledger import` of a CSV (10M bits, 10,000 rows, random order within each shard)
// beside the protobuf import of the same bits over HTTP, each into a fresh server (fsync always);
// both servers must end with the same bits per row. BENCH_CLI_IMPORT_BITS changes the size.
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { importCsv } from '../src/cli/import-csv.js';
import { encodeImportRequest } from '../src/encoding/import-request-encode.js';
import { HttpClient } from './lib/http-client.js';
import { importChunks, type ImportShape } from './lib/import-data.js';
import { createField, createIndex, importProtobuf, query } from './lib/pilosa.js';
import type { Reporter } from './lib/report.js';
import { removeDir, startChildServer, tempDir } from './lib/server-child.js';
import { now } from './lib/stats.js';

const BITS = Number(process.env.BENCH_CLI_IMPORT_BITS ?? 10_000_000);
const SHAPE: ImportShape = { bits: BITS, rows: 10_000, order: 'random' };
const PER_REQUEST = 1 << 20;

export async function runCliImport(r: Reporter): Promise<void> {
  r.begin('cli-import', `bitledger import of a ${BITS / 1e6}M-bit CSV beside the protobuf import (issue 13)`);
  const dir = tempDir('cli-import');
  const csv = join(dir, 'bits.csv');
  try {
    // The generator is random: the CSV and the protobuf bodies are made from the same chunks.
    const bodies: { shard: number; body: Uint8Array }[] = [];
    let encodeMs = 0;
    const out = createWriteStream(csv);
    for (const c of importChunks(SHAPE, PER_REQUEST)) {
      const e0 = now();
      bodies.push({
        shard: c.shard,
        body: encodeImportRequest({ index: 'b', field: 'f', shard: c.shard, rowIds: c.rowIds, columnIds: c.columnIds }),
      });
      encodeMs += now() - e0;
      const lines: string[] = [];
      for (let i = 0; i < c.rowIds.length; i++) lines.push(`${c.rowIds[i]},${c.columnIds[i]}\n`);
      if (!out.write(lines.join(''))) await new Promise<void>((res) => out.once('drain', () => res()));
    }
    out.end();
    await finished(out);

    const viaCli = await startChildServer({ label: 'cli-import', fsync: 'always' });
    const viaHttp = await startChildServer({ label: 'cli-import-http', fsync: 'always' });
    try {
      const t0 = now();
      const res = await importCsv({
        url: viaCli.url,
        index: 'b',
        field: 'f',
        files: [csv],
        create: true,
        clear: false,
        batchSize: PER_REQUEST,
      });
      const cliMs = now() - t0;
      r.figure('bitledger import (CSV → protobuf per shard), bits/s', res.bits / (cliMs / 1000), 'bits/s');

      const http = new HttpClient(viaHttp.url);
      await createIndex(http, 'b');
      await createField(http, 'b', 'f');
      let sendMs = 0;
      for (const { body } of bodies) {
        const s0 = now();
        await importProtobuf(http, 'b', 'f', body);
        sendMs += now() - s0;
      }
      r.figure('protobuf import over HTTP (requests only), bits/s', BITS / (sendMs / 1000), 'bits/s');
      r.figure(
        'protobuf import over HTTP (with client encoding), bits/s',
        BITS / ((sendMs + encodeMs) / 1000),
        'bits/s',
      );
      // Same state: the same bits per row on both servers (sampled rows and the total).
      const cliHttp = new HttpClient(viaCli.url);
      for (const pql of [
        'Count(Row(f=0))',
        'Count(Row(f=4321))',
        'Count(Row(f=9999))',
        `Count(Union(${Array.from({ length: 100 }, (_, k) => `Row(f=${k * 100})`).join(',')}))`,
      ]) {
        const [a, b] = [(await query(cliHttp, 'b', pql)).results[0], (await query(http, 'b', pql)).results[0]];
        if (a !== b) throw new Error(`${pql}: CLI import ${String(a)}, protobuf import ${String(b)}`);
      }
      cliHttp.close();
      http.close();
    } finally {
      await viaCli.dispose();
      await viaHttp.dispose();
    }
  } finally {
    removeDir(dir);
  }
}
