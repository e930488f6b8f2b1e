// Snapshot files on a MemoryDisk: the file format of SnapshotStore (encodeSnapshotFile, checked
// by parseSnapshotFile on read, so a damaged file is a SnapshotCorruptError), published whole
// after the disk's latency, or absent when a crash comes first. Satisfies the engine's
// SnapshotFiles port.
import type { SnapshotInfo } from '../snapshot-store.js';
import { encodeSnapshotFile, parseSnapshotFile } from '../snapshot-store.js';
import { type MemoryDisk, NEVER } from './memory-disk.js';

const TIME_OFFSET = 24;

export class MemorySnapshots {
  private readonly generation: number;

  constructor(private readonly disk: MemoryDisk) {
    this.generation = disk.generation;
  }

  private get dead(): boolean {
    return this.generation !== this.disk.generation;
  }

  async write(seq: number, chunks: Iterable<Uint8Array>, timeMs?: number): Promise<{ bytes: number }> {
    if (this.dead) return NEVER;
    const file = encodeSnapshotFile(seq, chunks, timeMs);
    await this.disk.publish(this.generation, seq, file);
    return { bytes: file.length };
  }

  async list(): Promise<number[]> {
    if (this.dead) return NEVER;
    return [...this.disk.snapshotFiles.keys()].sort((a, b) => b - a);
  }

  async infos(): Promise<SnapshotInfo[]> {
    const out: SnapshotInfo[] = [];
    for (const seq of await this.list()) {
      const file = this.disk.snapshotFiles.get(seq)!;
      const t = file.length >= TIME_OFFSET + 8 ? Number(file.readBigInt64LE(TIME_OFFSET)) : -1;
      out.push({ seq, timeMs: t < 0 ? undefined : t, bytes: file.length });
    }
    return out;
  }

  async read(seq: number): Promise<Uint8Array> {
    if (this.dead) return NEVER;
    const file = this.disk.snapshotFiles.get(seq);
    if (file === undefined) throw new Error(`memory snapshots: no snapshot at ${seq}`);
    return parseSnapshotFile(file, seq, `memory:snap-${seq}`).body;
  }

  async prune(keep: readonly number[]): Promise<number[]> {
    if (this.dead) return NEVER;
    const kept = new Set(keep);
    const deleted = [...this.disk.snapshotFiles.keys()].filter((s) => !kept.has(s));
    for (const s of deleted) this.disk.snapshotFiles.delete(s);
    return deleted;
  }
}
