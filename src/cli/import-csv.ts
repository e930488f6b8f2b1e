// `bitledger import --url U -i INDEX -f FIELD [--create] [--clear] FILE.csv…`: Pilosa's CSV
// import. Lines are `row,column[,timestamp]` (set/time fields; timestamp as 2006-01-02T15:04 or
// unix seconds) or `column,value` (int fields); rows/columns are keys where the field/index
// uses keys. Bits are batched per shard and sent as the protobuf ImportRequest; a progress bar
// (TTY) or a line every few seconds shows bits/s.
import { createReadStream, statSync } from 'node:fs';
import cliProgress from 'cli-progress';
import { ConfigError } from '../config/config.js';
import { SHARD_WIDTH } from '../domain/shard.js';
import { parseTimestamp } from '../domain/time-quantum.js';
import { encodeImportRequest, encodeImportValueRequest } from '../encoding/import-request-encode.js';
import { type FieldInfo, HttpTarget } from './http-target.js';

export interface ImportCsvOptions {
  url: string;
  index: string;
  field: string;
  files: string[];
  create: boolean;
  clear: boolean;
  batchSize: number;
  /** Progress output (stderr); a bar when it is a TTY. */
  progress?: NodeJS.WriteStream;
}

export interface ImportCsvResult {
  bits: number;
  ms: number;
}

const PROTOBUF = 'application/x-protobuf';
/** Requests in flight at once: one being applied while the next is encoded and sent. */
const IN_FLIGHT = 2;

interface Batch {
  rows: number[];
  cols: number[];
  times: bigint[];
  rowKeys: string[];
  colKeys: string[];
  values: bigint[];
}

const emptyBatch = (): Batch => ({ rows: [], cols: [], times: [], rowKeys: [], colKeys: [], values: [] });

export async function importCsv(opts: ImportCsvOptions): Promise<ImportCsvResult> {
  const totalBytes = sizeOfFiles(opts.files);
  const target = new HttpTarget(opts.url);
  const info = await fieldInfo(target, opts);
  const query = opts.clear ? '?clear=true' : '';
  const path = `/index/${encodeURIComponent(opts.index)}/field/${encodeURIComponent(opts.field)}/import${query}`;
  const started = performance.now();
  const progress = new Progress(opts.progress, totalBytes);
  let bits = 0;
  const inFlight = new Set<Promise<void>>();
  const send = async (shard: number, b: Batch): Promise<void> => {
    const body = encodeBatch(info, shard, b);
    const p = target.request('POST', path, body, PROTOBUF).then(() => {
      bits += b.cols.length + b.colKeys.length;
      progress.bits(bits);
    });
    const tracked = p.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
  };
  const batches = new Map<number, Batch>();
  let bytesRead = 0;
  try {
    // Plain `row,column` lines of ID fields are read from the bytes (most of a big import);
    // anything else (keys, int values, timestamps) goes through the string path.
    const plainIds = !info.indexKeys && !info.fieldKeys && info.type !== 'int';
    for (const file of opts.files) {
      let lineNo = 0;
      for await (const buf of csvChunks(file, (n) => progress.bytes((bytesRead += n)))) {
        for (let start = 0; start < buf.length; ) {
          let end = buf.indexOf(0x0a, start);
          if (end < 0) end = buf.length;
          const next = end + 1;
          if (end > start && buf[end - 1] === 0x0d) end--;
          lineNo++;
          let shard: number;
          if (plainIds && parseIdPair(buf, start, end)) {
            shard = Math.floor(pair[1] / SHARD_WIDTH);
            let b = batches.get(shard);
            if (b === undefined) batches.set(shard, (b = emptyBatch()));
            b.rows.push(pair[0]);
            b.cols.push(pair[1]);
            if (b.times.length > 0) b.times.push(0n);
          } else if (end === start) {
            start = next;
            continue;
          } else shard = addLine(info, buf.toString('utf8', start, end), batches, `${file}:${lineNo}`);
          start = next;
          const b = batches.get(shard)!;
          if (b.cols.length + b.colKeys.length >= opts.batchSize) {
            batches.delete(shard);
            await send(shard, b);
          }
        }
      }
    }
    for (const [shard, b] of batches) await send(shard, b);
    await Promise.all(inFlight);
  } finally {
    progress.stop();
  }
  return { bits, ms: performance.now() - started };
}

/** The files' total size (for the progress bar); refuses none, and a file that is missing. */
function sizeOfFiles(files: readonly string[]): number {
  if (files.length === 0) throw new ConfigError('import: no CSV file given');
  let totalBytes = 0;
  for (const f of files) {
    try {
      totalBytes += statSync(f).size;
    } catch {
      throw new ConfigError(`import: cannot read ${f}: no such file`);
    }
  }
  return totalBytes;
}

async function fieldInfo(target: HttpTarget, opts: ImportCsvOptions): Promise<FieldInfo> {
  const found = await target.field(opts.index, opts.field);
  if (found !== undefined) return found;
  if (!opts.create)
    throw new ConfigError(`import: field ${opts.index}/${opts.field} does not exist (--create makes it)`);
  const schema = await target.json<{ indexes?: { name: string }[] }>('GET', '/schema');
  if (!schema.indexes?.some((i) => i.name === opts.index))
    await target.json('POST', `/index/${encodeURIComponent(opts.index)}`, {});
  await target.json('POST', `/index/${encodeURIComponent(opts.index)}/field/${encodeURIComponent(opts.field)}`, {});
  return (await target.field(opts.index, opts.field))!;
}

/** Adds one CSV line to its shard's batch; returns the shard (0 for every keyed column). */
function addLine(info: FieldInfo, line: string, batches: Map<number, Batch>, where: string): number {
  const parts = line.split(',');
  const bad = (why: string): never => {
    throw new ConfigError(`import: ${where}: ${why}: ${line.slice(0, 100)}`);
  };
  if (parts.length < 2 || parts.length > 3)
    bad(info.type === 'int' ? 'expected column,value' : 'expected row,column[,timestamp]');
  const colText = info.type === 'int' ? parts[0] : parts[1];
  let shard = 0;
  let col = 0;
  if (!info.indexKeys) {
    col = parseId(colText) ?? bad('column is not an unsigned integer');
    shard = Math.floor(col / SHARD_WIDTH);
  }
  let b = batches.get(shard);
  if (b === undefined) batches.set(shard, (b = emptyBatch()));
  if (info.indexKeys) b.colKeys.push(colText);
  else b.cols.push(col);
  if (info.type === 'int') {
    if (parts.length !== 2 || !/^-?\d+$/.test(parts[1].trim())) bad('value is not an integer');
    b.values.push(BigInt(parts[1].trim()));
    return shard;
  }
  if (info.fieldKeys) b.rowKeys.push(parts[0]);
  else b.rows.push(parseId(parts[0]) ?? bad('row is not an unsigned integer'));
  if (parts.length === 3)
    b.times.push(timestampNs(parts[2].trim()) ?? bad('timestamp is neither 2006-01-02T15:04 nor unix seconds'));
  else if (b.times.length > 0) b.times.push(0n);
  return shard;
}

function parseId(s: string): number | undefined {
  const t = s.trim();
  if (!/^\d+$/.test(t)) return undefined;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : undefined;
}

function timestampNs(s: string): bigint | undefined {
  if (/^\d+$/.test(s)) return BigInt(s) * 1_000_000_000n;
  const ms = parseTimestamp(s);
  return ms === undefined ? undefined : BigInt(ms) * 1_000_000n;
}

function encodeBatch(info: FieldInfo, shard: number, b: Batch): Uint8Array {
  const keyed = info.indexKeys;
  if (info.type === 'int') {
    return encodeImportValueRequest({
      index: info.index,
      field: info.field,
      shard,
      ...(keyed ? { columnKeys: b.colKeys } : { columnIds: b.cols }),
      values: BigInt64Array.from(b.values),
    });
  }
  // A batch that saw a timestamp after untimed lines: those lines get 0 (no time) in front.
  const n = b.rows.length + b.rowKeys.length;
  const times =
    b.times.length === 0 ? null : BigInt64Array.from([...new Array<bigint>(n - b.times.length).fill(0n), ...b.times]);
  return encodeImportRequest({
    index: info.index,
    field: info.field,
    shard,
    ...(info.fieldKeys ? { rowKeys: b.rowKeys } : { rowIds: b.rows }),
    ...(keyed ? { columnKeys: b.colKeys } : { columnIds: b.cols }),
    timestamps: times,
  });
}

/** The file in chunks that end at a line end (reports bytes read as it goes). */
async function* csvChunks(file: string, onBytes: (n: number) => void): AsyncGenerator<Buffer> {
  let rest: Buffer | undefined;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
    const data = chunk as Buffer;
    onBytes(data.length);
    const buf = rest === undefined ? data : Buffer.concat([rest, data]);
    const last = buf.lastIndexOf(0x0a);
    if (last < 0) {
      rest = buf;
      continue;
    }
    rest = last + 1 < buf.length ? buf.subarray(last + 1) : undefined;
    yield buf.subarray(0, last + 1);
  }
  if (rest !== undefined && rest.length > 0) yield rest;
}

/** Scratch for parseIdPair: [row, column]. */
const pair = [0, 0];

/** `digits,digits` exactly (at most 15 digits each, so exact): into `pair`; false otherwise. */
function parseIdPair(buf: Buffer, start: number, end: number): boolean {
  let i = start;
  for (let k = 0; k < 2; k++) {
    let v = 0;
    const from = i;
    while (i < end && buf[i] >= 0x30 && buf[i] <= 0x39) v = v * 10 + buf[i++] - 0x30;
    if (i === from || i - from > 15) return false;
    pair[k] = v;
    if (k === 0) {
      if (buf[i] !== 0x2c) return false;
      i++;
    }
  }
  return i === end;
}

/** A bar with bits/s on a TTY; otherwise a line every few seconds. */
class Progress {
  private readonly bar: cliProgress.SingleBar | undefined;
  private readonly started = performance.now();
  private lastLine = performance.now();
  private readBytes = 0;
  private sentBits = 0;

  constructor(
    private readonly out: NodeJS.WriteStream | undefined,
    total: number,
  ) {
    if (out?.isTTY === true) {
      this.bar = new cliProgress.SingleBar(
        {
          stream: out,
          format: 'importing |{bar}| {percentage}% | {bits} bits | {rate} bits/s | ETA {eta}s',
          hideCursor: true,
        },
        cliProgress.Presets.shades_classic,
      );
      this.bar.start(total, 0, { bits: 0, rate: 0 });
    }
  }

  bytes(n: number): void {
    this.readBytes = n;
    this.update();
  }

  bits(n: number): void {
    this.sentBits = n;
    this.update();
  }

  private update(): void {
    const rate = Math.round(this.sentBits / ((performance.now() - this.started) / 1000 || 1));
    if (this.bar !== undefined) this.bar.update(this.readBytes, { bits: this.sentBits, rate });
    else if (this.out !== undefined && performance.now() - this.lastLine >= 2000) {
      this.lastLine = performance.now();
      this.out.write(`importing: ${this.sentBits} bits sent, ${rate} bits/s, ${this.readBytes} bytes read\n`);
    }
  }

  stop(): void {
    this.bar?.stop();
  }
}
