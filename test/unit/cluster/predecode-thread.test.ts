// The coordinator's predecode of a large import body on the decode thread
// (encoding/import-decode-thread.ts): it yields exactly what the request thread's decode does, and
// a body that does not decode is still refused by the apply, with the decode's own error.
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { CommandApplier } from '../../../src/cluster/commands/applier.js';
import type { Command, LogCommand } from '../../../src/cluster/commands/command.js';
import { encodeCommand } from '../../../src/cluster/commands/command-codec.js';
import type { DecodedBody } from '../../../src/cluster/types.js';
import { ImportDecodeThread } from '../../../src/encoding/import-decode-thread.js';
import { encodeImportRequest, encodeImportValueRequest } from '../../../src/encoding/import-request-encode.js';
import { decodeImportRequest, decodeImportValueRequest } from '../../../src/encoding/import-request.js';
import { bootstrap } from '../../../src/engine/bootstrap.js';
import { ImportService } from '../../../src/service/import/import-service.js';
import { SchemaService } from '../../../src/service/schema-service.js';
import { EventLog } from '../../../src/storage/event-log.js';
import { MemoryDisk } from '../../../src/storage/memory/memory-disk.js';
import { MemoryKv } from '../../../src/storage/memory/memory-kv.js';
import { MemorySnapshots } from '../../../src/storage/memory/memory-snapshots.js';
import { systemClock } from '../../../src/util/clock.js';
import { seededRandom } from '../../helpers/seeded.js';
import { testEngine } from '../../helpers/test-engine.js';
import { SET_FIELD } from '../../integration/cluster-write-support.js';

const silent = pino({ level: 'silent' });
// Every body goes to the thread, whatever its size.
const thread = new ImportDecodeThread(0);
afterAll(() => thread.close());

/** A body inside a larger buffer (as a message's bytes are): only its own bytes are the request. */
function framed(body: Uint8Array): Uint8Array {
  const buf = new Uint8Array(body.length + 64).fill(0xff);
  buf.set(body, 32);
  return buf.subarray(32, 32 + body.length);
}

/** Column IDs of one of three widths: 32-bit, up to 2^53−1, and full uint64. */
function columns(rand: () => number, n: number, width: number): (number | bigint)[] {
  return Array.from({ length: n }, () => {
    if (width === 0) return Math.floor(rand() * 2 ** 32);
    if (width === 1) return Math.floor(rand() * Number.MAX_SAFE_INTEGER);
    return (BigInt(Math.floor(rand() * 2 ** 32)) << 32n) | BigInt(Math.floor(rand() * 2 ** 32));
  });
}

describe('import decode thread', () => {
  it('decodes seeded random ImportRequests exactly as decodeImportRequest', async () => {
    const rand = seededRandom(21);
    for (let round = 0; round < 12; round++) {
      const n = 1 + Math.floor(rand() * 20_000);
      const keyed = round % 4 === 3;
      const body = framed(
        encodeImportRequest({
          index: `i${round}`,
          field: 'f',
          shard: Math.floor(rand() * 1000),
          rowIds: keyed ? [] : Array.from({ length: n }, () => Math.floor(rand() * 2 ** 40)),
          columnIds: keyed ? [] : columns(rand, n, round % 3),
          timestamps:
            round % 2 === 0 ? Array.from({ length: n }, () => BigInt(Math.floor(rand() * 2 ** 52)) * 1000n) : null,
          rowKeys: keyed ? Array.from({ length: n }, (_, i) => `r${i % 17}`) : [],
          columnKeys: keyed ? Array.from({ length: n }, () => `c${Math.floor(rand() * 1e9)}`) : [],
        }),
      );
      const off = await thread.bits(body);
      const here = decodeImportRequest(body);
      expect(off).toStrictEqual(here);
      expect(off.columnIds.constructor).toBe(here.columnIds.constructor);
      expect(off.rowIds.constructor).toBe(here.rowIds.constructor);
    }
  });

  it('decodes seeded random ImportValueRequests exactly as decodeImportValueRequest', async () => {
    const rand = seededRandom(7);
    for (let round = 0; round < 6; round++) {
      const n = 1 + Math.floor(rand() * 20_000);
      const body = framed(
        encodeImportValueRequest({
          index: 'i',
          field: 'v',
          shard: round,
          columnIds: columns(rand, n, round % 3),
          values: Array.from({ length: n }, () => BigInt(Math.floor((rand() - 0.5) * 2 ** 53)) * 977n),
        }),
      );
      const off = await thread.values(body);
      expect(off).toStrictEqual(decodeImportValueRequest(body));
    }
  });

  it('refuses a body that does not decode, and the apply refuses it with the decode error', async () => {
    // A packed field whose length runs past the end of the body.
    const good = encodeImportRequest({ index: 'i', field: 'f', rowIds: [1, 2, 3], columnIds: [4, 5, 6] });
    const corrupt = good.slice(0, good.length - 2);
    expect(() => decodeImportRequest(corrupt)).toThrow();
    await expect(thread.bits(corrupt)).rejects.toThrow();

    const withThread = await applierOn(thread);
    const plain = await applierOn(undefined);
    const cmd: LogCommand = {
      kind: 'import',
      index: 'i',
      field: 'f',
      shard: 0,
      format: 'bits',
      clear: false,
      body: corrupt,
      partition: 0,
      metaOffset: '2',
    };
    const decodedBody = withThread.applier.predecode(cmd);
    expect(decodedBody).toBeDefined();
    const seen = await withThread.apply(cmd, decodedBody);
    const refused = await plain.apply(cmd, undefined);
    expect(refused?.ok).toBe(false);
    expect(seen).toStrictEqual(refused);
    await withThread.stop();
    await plain.stop();
  });
});

/** An applier on an in-memory engine with index i and set field f, applying log commands at offset 0. */
async function applierOn(decodeThread: ImportDecodeThread | undefined) {
  const disk = new MemoryDisk(systemClock);
  const log = await EventLog.openOn(new MemoryKv(disk), { fsync: 'always', logger: silent });
  const snapshots = new MemorySnapshots(disk);
  const { holder } = await bootstrap(log, snapshots, silent);
  const engine = testEngine(holder, log, snapshots, silent);
  const applier = new CommandApplier({
    engine,
    schema: new SchemaService(engine),
    imports: new ImportService(engine),
    partitionOf: () => 0,
    logger: silent,
    ...(decodeThread !== undefined ? { decodeThread } : {}),
  });
  const schema: Command[] = [
    {
      kind: 'schema',
      time: 1,
      schema: { op: 'createIndex', index: 'i', options: { keys: false, trackExistence: true } },
    },
    {
      kind: 'schema',
      time: 1,
      schema: {
        op: 'createField',
        index: 'i',
        field: 'f',
        options: SET_FIELD,
        extraIntFields: [],
      },
    },
  ];
  await applier.deliver(
    'meta',
    0,
    schema.map((c, i) => ({ offset: String(i), value: encodeCommand(c) })),
    String(schema.length),
  );
  return {
    applier,
    apply: async (cmd: LogCommand, decodedBody: Promise<DecodedBody> | undefined) => {
      const message = {
        offset: '0',
        value: encodeCommand({ ...cmd, time: 1 }),
        ...(decodedBody ? { decodedBody } : {}),
      };
      await applier.deliver('log', 0, [message], '1');
      return applier.results.get('log', 0, '0');
    },
    stop: async () => {
      await engine.stop();
      await log.close();
    },
  };
}
