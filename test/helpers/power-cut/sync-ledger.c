/*
 * sync-ledger: an LD_PRELOAD shim for power-cut tests (test/helpers/power-cut.ts).
 *
 * A SIGKILLed process keeps everything it wrote in the OS page cache, so crash tests alone never
 * show what an fsync policy loses. This shim records, in a ledger file, how much of each regular
 * file was durable at every fsync/fdatasync; after the kill the test truncates every file back to
 * its last synced length (files never synced: emptied), which is what the disk would hold after
 * a power cut. It interposes the libc calls that LevelDB (C++, stdio + fdatasync) and Node's
 * libuv thread pool both go through; libuv's io_uring path bypasses libc, so the test runs the
 * child with UV_USE_IO_URING=0.
 *
 * Files are keyed by (device, inode), so renames (CURRENT, snapshot .tmp -> .snap) keep what was
 * synced. Since this filesystem has no birth time, a reused inode is told apart by recording a
 * "drop" when a file is unlinked, renamed over, or opened with O_TRUNC.
 *
 * Ledger lines (appended with O_APPEND, one write each, so threads do not interleave):
 *   S <dev> <ino> <bytes synced> <ms since epoch when the sync began> <w|r>
 *   D <dev> <ino>
 * The last field of S tells a sync through a writable descriptor (w: LevelDB's own, the snapshot
 * store's) from one through a read-only one (r: the event log's fsync of LevelDB's WAL files by
 * path), so a test can tell what LevelDB alone would have made durable.
 * Model limits: directory entries (create, rename, unlink) count as durable at once, and data
 * written in place over an already-synced range is not rolled back (neither is done by LevelDB,
 * which only appends, nor by the snapshot store, which writes new files).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int ledger = -1;
static char prefix[PATH_MAX];
static size_t prefix_len = 0;
/* SYNC_LEDGER_SLOW_TABLE_MS: each sync of a LevelDB table file (*.ldb) waits this long first, so
 * a compaction keeps the WAL it replaces for at least that long (a test's window stays open). */
static long slow_table_ms = 0;

__attribute__((constructor)) static void init(void) {
  const char *path = getenv("SYNC_LEDGER_FILE");
  const char *dir = getenv("SYNC_LEDGER_DIR");
  const char *slow = getenv("SYNC_LEDGER_SLOW_TABLE_MS");
  if (slow != NULL) slow_table_ms = strtol(slow, NULL, 10);
  if (path == NULL || dir == NULL) return;
  /* A raw syscall: the shim must not run through its own wrappers. */
  ledger = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (realpath(dir, prefix) == NULL) snprintf(prefix, sizeof prefix, "%s", dir);
  prefix_len = strlen(prefix);
}

static void put(const char *line, int n) {
  if (ledger >= 0 && n > 0) (void)!write(ledger, line, (size_t)n);
}

/* True if fd is a regular file under the watched directory; *table: whether it is a LevelDB table. */
static int watched_fd(int fd, struct stat *st, int *table) {
  *table = 0;
  if (ledger < 0 || fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) return 0;
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return 0;
  target[n] = '\0';
  *table = n > 4 && strcmp(target + n - 4, ".ldb") == 0;
  return strncmp(target, prefix, prefix_len) == 0 && (target[prefix_len] == '/' || target[prefix_len] == '\0');
}

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The size is taken before the sync: everything written before the call is durable after it. */
static int synced(int fd, int (*real)(int)) {
  struct stat st;
  int table;
  int watch = watched_fd(fd, &st, &table);
  if (watch && table && slow_table_ms > 0) {
    struct timespec wait = {slow_table_ms / 1000, (slow_table_ms % 1000) * 1000000L};
    nanosleep(&wait, NULL);
  }
  int flags = watch ? fcntl(fd, F_GETFL) : 0;
  char by = flags >= 0 && (flags & O_ACCMODE) == O_RDONLY ? 'r' : 'w';
  long long began = now_ms();
  int rc = real(fd);
  if (rc == 0 && watch) {
    char line[128];
    put(line, snprintf(line, sizeof line, "S %llu %llu %lld %lld %c\n", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, (long long)st.st_size, began, by));
  }
  return rc;
}

static void drop_path(int dirfd, const char *path) {
  struct stat st;
  if (ledger < 0 || path == NULL || fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return;
  char line[96];
  put(line, snprintf(line, sizeof line, "D %llu %llu\n", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino));
}

/* The next definition of `name` (libc's), looked up once. */
#define REAL(name) \
  static __typeof__(&name) real_##name = NULL; \
  if (real_##name == NULL) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

int fsync(int fd) {
  REAL(fsync);
  return synced(fd, real_fsync);
}

int fdatasync(int fd) {
  REAL(fdatasync);
  return synced(fd, real_fdatasync);
}

int unlink(const char *path) {
  REAL(unlink);
  drop_path(AT_FDCWD, path);
  return real_unlink(path);
}

int unlinkat(int dirfd, const char *path, int flags) {
  REAL(unlinkat);
  if ((flags & AT_REMOVEDIR) == 0) drop_path(dirfd, path);
  return real_unlinkat(dirfd, path, flags);
}

int rename(const char *from, const char *to) {
  REAL(rename);
  drop_path(AT_FDCWD, to);
  return real_rename(from, to);
}

int renameat(int fromfd, const char *from, int tofd, const char *to) {
  REAL(renameat);
  drop_path(tofd, to);
  return real_renameat(fromfd, from, tofd, to);
}

#define OPEN_WRAPPER(name) \
  int name(const char *path, int flags, ...) { \
    REAL(name); \
    mode_t mode = 0; \
    if (flags & (O_CREAT | O_TMPFILE)) { \
      va_list ap; \
      va_start(ap, flags); \
      mode = (mode_t)va_arg(ap, int); \
      va_end(ap); \
    } \
    if (flags & O_TRUNC) drop_path(AT_FDCWD, path); \
    return real_##name(path, flags, mode); \
  }

OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)
