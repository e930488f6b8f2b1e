// Returning memory an import freed to the kernel. A bulk write leaves tens of MB free but resident:
// request bodies and decoded ID arrays wait for a V8 collection, and glibc keeps what is freed
// (holes in its heaps, and a heap top it trims only past a threshold that rises with big frees).
// Measured at 64M sparse bits: 275 MiB resident after the import, 169 MiB once collected and
// trimmed (bench/scale.ts). So once bulk writes go quiet, the server collects and calls glibc's
// malloc_trim(0) (src/native/malloc-trim.c, built by `npm ci`) on a libuv pool thread. Where the
// addon is not built or there is no glibc, this does nothing.
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from 'pino';
import { type Clock, type ClockTimer, systemClock } from './clock.js';
import { repoPath } from './proto-path.js';

interface NativeTrim {
  supported: boolean;
  trim(): Promise<boolean>;
  tune(arenaMax: number, mmapThreshold: number): boolean;
}

const ADDON = 'src/native/build/Release/malloc_trim.node';

function loadNative(): NativeTrim | undefined {
  try {
    const native = createRequire(import.meta.url)(repoPath(import.meta.url, ADDON)) as NativeTrim;
    return native.supported ? native : undefined;
  } catch {
    return undefined;
  }
}

const native = loadNative();

/**
 * Allocator settings for what is allocated from now on (call before storage opens):
 * - at most ARENA_MAX malloc arenas: glibc gives every thread that allocates its own, up to 8 a
 *   core (the libuv pool, LevelDB's compaction thread), and each keeps free memory of its own;
 * - the mmap threshold fixed (at glibc's own ceiling for it): glibc otherwise moves it with every
 *   large block freed, so where a request body or an import's packed rows land, and what a trim
 *   can give back, drifts over the process's life.
 * Measured at 64M sparse bits, resident after import and trims: 2.88–3.01 B/bit untuned,
 * 2.73–2.75 with either setting (bench/scale.ts). Returns whether glibc took them.
 */
export function tuneAllocator(): boolean {
  return native?.tune(ARENA_MAX, MMAP_THRESHOLD) === true;
}
const ARENA_MAX = 2;
const MMAP_THRESHOLD = 32 * 1024 * 1024;

let gcFn: (() => void) | undefined;
/** A full collection: dead buffers and bitmaps are freed by it (and their finalizers after it). */
function collect(): void {
  gcFn ??=
    (globalThis as { gc?: () => void }).gc ??
    (() => {
      setFlagsFromString('--expose-gc');
      return runInNewContext('gc') as () => void;
    })();
  gcFn();
}

/** Bulk writes of at least this many bytes (log payload) since the last trim call for one. */
const CHURN_BYTES = 8 * 1024 * 1024;
/** …and this long without more of them. */
const QUIET_MS = 1000;
/**
 * Then once more this much later: LevelDB flushes and compacts in the background after the
 * writes were acknowledged, and frees its buffers when done (8 MiB left resident at 64M bits
 * when only the first trim ran).
 */
const FOLLOW_UP_MS = 5000;
/** Finalizers of what a collection found dead run in a later task: give them this long. */
const FINALIZE_MS = 50;

export interface TrimFigures {
  trims: number;
  /** Resident bytes the trims gave back (RSS before − after, summed). */
  releasedBytes: number;
}

export class HeapTrimmer {
  private churn = 0;
  /** `churn` when the timer was set: more since means writes went on, so not quiet yet. */
  private churnAtTimer = 0;
  private timer: ClockTimer | undefined;
  private stopped = false;
  readonly figures: TrimFigures = { trims: 0, releasedBytes: 0 };

  /** `off`: never trims (the simulator: a trim's pool thread would finish at a real time). */
  constructor(
    private readonly logger: Logger,
    private readonly clock: Clock = systemClock,
    private readonly off = false,
  ) {}

  /** Whether trims happen here (the addon built, on glibc, and not switched off). */
  get enabled(): boolean {
    return native !== undefined && !this.off;
  }

  /**
   * `bytes` were written: trim once writes have been quiet for a while. Called for every write
   * (Set() included), so it only adds, and sets a timer when none is set: the timer, not each
   * write, tells whether writes went on meanwhile.
   */
  note(bytes: number): void {
    this.churn += bytes;
    if (this.timer === undefined && this.churn >= CHURN_BYTES && this.enabled && !this.stopped)
      this.schedule(QUIET_MS, true);
  }

  private schedule(ms: number, followUp: boolean): void {
    this.churnAtTimer = this.churn;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = undefined;
        // Writes since the timer was set: wait for a quiet second again.
        if (this.churn !== this.churnAtTimer) this.schedule(QUIET_MS, true);
        else void this.run(followUp);
      },
      ms,
      { unref: true },
    );
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private async run(followUp: boolean): Promise<void> {
    if (native === undefined || this.stopped) return;
    this.churn = 0;
    try {
      const before = process.memoryUsage.rss();
      const t0 = this.clock.monotonic();
      // Twice: a native bitmap's wrapper is found dead by one collection, and what its finalizer
      // releases may be found by the next.
      for (let i = 0; i < 2; i++) {
        collect();
        await this.clock.sleep(FINALIZE_MS);
      }
      await native.trim();
      const released = Math.max(0, before - process.memoryUsage.rss());
      this.figures.trims++;
      this.figures.releasedBytes += released;
      this.logger.debug(
        { releasedMiB: Math.round(released / 1048576), ms: Math.round(this.clock.monotonic() - t0) },
        'freed memory returned to the kernel after bulk writes',
      );
    } catch (err) {
      this.logger.warn({ err: String(err) }, 'returning freed memory to the kernel failed');
    }
    // Scheduled once this one is done, so two never overlap.
    if (followUp && !this.stopped) this.schedule(FOLLOW_UP_MS, false);
  }
}
