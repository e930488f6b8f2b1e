// encodeRecordsSliced hands LevelDB the same keys and values as encodeRecords, whether the batch
// is one slice (small records) or several (a large import's records, tens of MB), and returns to
// the event loop between slices.
import { describe, expect, it } from 'vitest';
import { encodeRecords, encodeRecordsSliced } from '../../../src/storage/envelope.js';

const record = (type: number, size: number): { type: number; payload: Uint8Array } => ({
  type,
  payload: Uint8Array.from({ length: size }, (_, i) => (i * 31 + type) & 0xff),
});

function collectPuts(): { puts: [string, string][]; put: (k: Buffer, v: Buffer) => void } {
  const puts: [string, string][] = [];
  return { puts, put: (k, v) => puts.push([k.toString('hex'), Buffer.from(v).toString('base64')]) };
}

describe('encodeRecordsSliced', () => {
  for (const [what, records] of [
    ['small records', [record(5, 10), record(6, 200), record(11, 0)]],
    ['records over several 4 MB slices', [record(5, 3 << 20), record(5, 3 << 20), record(6, 5 << 20), record(5, 7)]],
  ] as const) {
    it(`puts what encodeRecords puts: ${what}`, async () => {
      const a = collectPuts();
      const b = collectPuts();
      const bytes = encodeRecords(records, 41, a.put);
      let turns = 0;
      const ticking = setInterval(() => turns++, 0);
      expect(await encodeRecordsSliced(records, 41, b.put)).toBe(bytes);
      clearInterval(ticking);
      expect(b.puts).toEqual(a.puts);
      if (records.length > 3) expect(turns).toBeGreaterThan(0);
    });
  }
});
