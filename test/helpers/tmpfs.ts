// A small tmpfs for disk-full tests (root only: CI runs as root), with a filler file that takes
// the space a test wants gone. unmount() also removes the mount point.
import { execFileSync } from 'node:child_process';
import { rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, tempDir } from './temp.js';

export const isRoot = process.getuid?.() === 0;

export interface Tmpfs {
  dir: string;
  /** Free bytes as statfs reports them to unprivileged writers. */
  free(): number;
  /** Fills the file system up to `leave` bytes free (replacing the filler). */
  fill(leave: number): void;
  /** Removes the filler: its space comes back. */
  unfill(): void;
  unmount(): void;
}

export function mountTmpfs(sizeMiB: number, prefix = 'bitledger-tmpfs-'): Tmpfs {
  const dir = tempDir(prefix);
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir]);
  const filler = join(dir, 'filler');
  const free = (): number => {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  };
  return {
    dir,
    free,
    fill(leave) {
      rmSync(filler, { force: true });
      try {
        writeFileSync(filler, Buffer.alloc(Math.max(0, free() - leave)));
      } catch (err) {
        // Something else (LevelDB compacting) took space meanwhile: the disk is as full as asked.
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      }
    },
    unfill() {
      rmSync(filler, { force: true });
    },
    unmount() {
      execFileSync('umount', [dir]);
      removeDir(dir);
    },
  };
}
