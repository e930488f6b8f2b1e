// File-system steps that make a write survive power loss: data is fsynced before it is
// published by rename, and the directory is fsynced so the rename itself is durable.
import { open, rename, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';

/** fsyncs a file or directory by path, through a read-only descriptor. */
export async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** A directory fsynced makes its entries durable (a rename into it, a new file). */
export const fsyncDir = fsyncPath;

/** FileHandle.write may write less than asked; loop so a short write cannot truncate a file. */
export async function writeAll(fh: FileHandle, buf: Uint8Array, position?: number): Promise<void> {
  let done = 0;
  while (done < buf.length) {
    const pos = position === undefined ? null : position + done;
    const { bytesWritten } = await fh.write(buf, done, buf.length - done, pos);
    done += bytesWritten;
  }
}

/**
 * Replaces `path` atomically: `write` fills a tmp file, which is fsynced, renamed over `path`,
 * and the directory fsynced. On failure the tmp file is removed and nothing is replaced.
 */
export async function writeFileAtomic<T>(
  dir: string,
  path: string,
  write: (fh: FileHandle) => Promise<T>,
  tmp = `${path}.tmp`,
): Promise<T> {
  const fh = await open(tmp, 'w');
  let result: T;
  try {
    result = await write(fh);
    await fh.sync();
  } catch (err) {
    await fh.close();
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fh.close();
  await rename(tmp, path);
  await fsyncDir(dir);
  return result;
}
