// The async import decoders return to the event loop while decoding a large body (issue 15:
// a 100 MB import must not hold /status), and decode exactly what the synchronous ones do.
import { describe, expect, it } from 'vitest';
import { encodeImportRequest, encodeImportValueRequest } from '../../../src/encoding/import-request-encode.js';
import {
  decodeImportRequest,
  decodeImportRequestAsync,
  decodeImportValueRequestAsync,
} from '../../../src/encoding/import-request.js';

const N = 600_000;

/** Typed arrays compared by their bytes (deep equality over a million items is slow). */
const bytes = (a: ArrayBufferView): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

describe('async import decoding', () => {
  it('lets other callbacks run while it decodes a large ImportRequest, and decodes the same', async () => {
    const rowIds = new Float64Array(N).map((_, i) => i % 1000);
    const columnIds = new Float64Array(N).map((_, i) => (i * 7919) % (1 << 24));
    const timestamps = new BigInt64Array(N).map((_, i) => BigInt(i) * 1_000_000_000n);
    const body = encodeImportRequest({
      index: 'i',
      field: 'f',
      shard: 0,
      rowIds,
      columnIds,
      timestamps,
      rowKeys: [],
      columnKeys: [],
    });
    let ticks = 0;
    let decoding = true;
    const tick = (): void => {
      ticks++;
      if (decoding) setImmediate(tick);
    };
    setImmediate(tick);
    // sliceMs 0: a yield after every piece of packed data, whatever the machine's speed.
    const r = await decodeImportRequestAsync(body, 0);
    decoding = false;
    // Several turns of the event loop passed during the decode (≥ 1 MB per column), not one after it.
    expect(ticks).toBeGreaterThan(2);
    const sync = decodeImportRequest(body);
    expect(bytes(r.rowIds).equals(bytes(sync.rowIds))).toBe(true);
    expect(bytes(r.columnIds).equals(bytes(sync.columnIds))).toBe(true);
    expect(
      r.timestamps !== null && sync.timestamps !== null && bytes(r.timestamps).equals(bytes(sync.timestamps)),
    ).toBe(true);
    expect(r.columnIds.length).toBe(N);
  });

  it('decodes ImportValueRequest values across yields', async () => {
    const columnIds = new Float64Array(N).map((_, i) => i);
    const values = new BigInt64Array(N).map((_, i) => BigInt(i % 7 === 0 ? -i : i) * 1_000_000_007n);
    const r = await decodeImportValueRequestAsync(
      encodeImportValueRequest({ index: 'i', field: 'v', shard: 0, columnIds, values, columnKeys: [] }),
    );
    expect(bytes(r.values).equals(bytes(values))).toBe(true);
    expect(r.columnIds.length).toBe(N);
    expect(r.columnIds[N - 1]).toBe(N - 1);
  });
});
