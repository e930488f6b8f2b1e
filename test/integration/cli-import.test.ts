// `bitledger import` of a CSV gives the same state (stateDigest) as the protobuf import of the
// same bits; keys and int fields go through the same path; `bitledger export` writes the bits back.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exportCsv } from '../../src/cli/export-csv.js';
import { importCsv } from '../../src/cli/import-csv.js';
import { SHARD_WIDTH } from '../../src/domain/shard.js';
import { encodeImportRequest } from '../../src/encoding/import-request-encode.js';
import { stateDigest } from '../../src/state/digest.js';
import { removeDir, startServer, stopServer, tempDir, type TestServer } from '../helpers/server.js';

const dir = tempDir();
const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await stopServer(s);
  removeDir(dir);
});

async function listening(): Promise<{ server: TestServer; url: string }> {
  const server = await startServer();
  servers.push(server);
  const port = await server.listen();
  return { server, url: `http://127.0.0.1:${port}` };
}

async function post(url: string, path: string, body: string | Uint8Array, type = 'application/json'): Promise<void> {
  const r = await fetch(url + path, { method: 'POST', body, headers: { 'content-type': type } });
  expect(r.status, await r.clone().text()).toBe(200);
}

/** Deterministic pseudo-random bits: rows 0..19 over shards 0..3. */
function bits(n: number): { rows: number[]; cols: number[] } {
  let x = 12345;
  const rnd = (m: number): number => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x % m;
  };
  const rows: number[] = [];
  const cols: number[] = [];
  for (let i = 0; i < n; i++) {
    rows.push(rnd(20));
    cols.push(rnd(4 * SHARD_WIDTH));
  }
  return { rows, cols };
}

describe('bitledger import / export', () => {
  it('a CSV import equals the protobuf import of the same bits, and export writes them back', async () => {
    const { rows, cols } = bits(300_000);
    const csv = join(dir, 'bits.csv');
    writeFileSync(csv, rows.map((r, i) => `${r},${cols[i]}\n`).join(''));

    const viaCsv = await listening();
    const r = await importCsv({
      url: viaCsv.url,
      index: 'i',
      field: 'f',
      files: [csv],
      create: true,
      clear: false,
      batchSize: 50_000,
    });
    expect(r.bits).toBe(300_000);

    const viaProto = await listening();
    await post(viaProto.url, '/index/i', '{}');
    await post(viaProto.url, '/index/i/field/f', '{}');
    for (let shard = 0; shard < 4; shard++) {
      const idx = cols.flatMap((c, i) => (Math.floor(c / SHARD_WIDTH) === shard ? [i] : []));
      await post(
        viaProto.url,
        '/index/i/field/f/import',
        encodeImportRequest({
          index: 'i',
          field: 'f',
          shard,
          rowIds: idx.map((i) => rows[i]),
          columnIds: idx.map((i) => cols[i]),
        }),
        'application/x-protobuf',
      );
    }
    expect(viaCsv.server.engine.peekApplied(stateDigest)).toBe(viaProto.server.engine.peekApplied(stateDigest));

    const out = join(dir, 'out.csv');
    await exportCsv({ url: viaCsv.url, index: 'i', field: 'f', output: out });
    const exported = new Set(readFileSync(out, 'utf8').trim().split('\n'));
    expect(exported).toEqual(new Set(rows.map((row, i) => `${row},${cols[i]}`)));
  });

  it('imports keys and int values, and --clear removes bits', async () => {
    const { server, url } = await listening();
    await post(url, '/index/k', JSON.stringify({ options: { keys: true } }));
    await post(url, '/index/k/field/tag', JSON.stringify({ options: { keys: true } }));
    await post(url, '/index/k/field/n', JSON.stringify({ options: { type: 'int', min: -100, max: 100 } }));
    const tags = join(dir, 'tags.csv');
    writeFileSync(tags, 'red,alice\nred,bob\nblue,bob\r\n');
    await importCsv({ url, index: 'k', field: 'tag', files: [tags], create: false, clear: false, batchSize: 2 });
    const nums = join(dir, 'nums.csv');
    writeFileSync(nums, 'alice,-7\nbob,42\n');
    await importCsv({ url, index: 'k', field: 'n', files: [nums], create: false, clear: false, batchSize: 10 });
    const q = async (pql: string): Promise<unknown> =>
      ((await (await fetch(`${url}/index/k/query`, { method: 'POST', body: pql })).json()) as { results: unknown[] })
        .results[0];
    expect(await q('Count(Row(tag="red"))')).toBe(2);
    expect(await q('Sum(field=n)')).toMatchObject({ value: 35, count: 2 });
    const clear = join(dir, 'clear.csv');
    writeFileSync(clear, 'red,bob\n');
    await importCsv({ url, index: 'k', field: 'tag', files: [clear], create: false, clear: true, batchSize: 10 });
    expect(await q('Count(Row(tag="red"))')).toBe(1);
    expect(server.fatal).toEqual([]);
  });

  it('as a command: one line per expected error, and the import itself', async () => {
    const { url } = await listening();
    const csv = join(dir, 'small.csv');
    writeFileSync(csv, '1,1\r\n1,2\n\n2,3'); // CRLF, a blank line, no final newline
    const run = (args: string[]): Promise<{ code: number | null; out: string; err: string }> =>
      new Promise((resolve) => {
        const p = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        p.stdout.on('data', (d: Buffer) => (out += d.toString()));
        p.stderr.on('data', (d: Buffer) => (err += d.toString()));
        p.on('exit', (code) => resolve({ code, out, err }));
      });
    const [ok, missingField, missingFile, bad] = await Promise.all([
      run(['import', '--url', url, '-i', 'c', '-f', 'f', '--create', csv]),
      run(['import', '--url', url, '-i', 'nope', '-f', 'f', csv]),
      run(['import', '--url', url, '-i', 'c', '-f', 'f', join(dir, 'absent.csv')]),
      run(['import', '--url', url, '-i', 'c']),
    ]);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/imported 3 bits/);
    expect([missingField.code, missingFile.code, bad.code]).toEqual([2, 2, 2]);
    expect(missingField.err.trim()).toMatch(/^bitledger: import: field nope\/f does not exist \(--create makes it\)$/);
    expect(missingFile.err.trim()).toMatch(/^bitledger: import: cannot read .*absent.csv: no such file$/);
    expect(bad.err.trim()).toBe('bitledger: import: --field is required');
  });
});
