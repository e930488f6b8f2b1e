// File-system steps that make a write survive power loss: data is fsynced before it is
// published by rename, and the directory is fsynced so the rename itself is durable.
import { open, rename, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';

export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** FileHandle.write may write less than asked; loop so a short write cannot truncate a file. */
export async function writeAll(fh: FileHandle, buf: Uint8Array, position?: number): Promise<void> {
  let done = 0;
  while (done < buf.length) {
    const pos = position === undefined ? null : position + done;
    const { bytesWritten } = await fh.write(buf, done, buf.length - done, pos);
    done += bytesWritten;
  }
}

/** Replace `path` with `data` atomically: tmp file, fsync, rename, fsync of the directory. */
export async function writeFileAtomic(dir: string, path: string, data: Uint8Array): Promise<void> {
  const tmp = `${path}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await writeAll(fh, data);
    await fh.sync();
  } catch (err) {
    await fh.close();
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fh.close();
  await rename(tmp, path);
  await fsyncDir(dir);
}
