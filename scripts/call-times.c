/* The time of every read, write, lseek, open, close and fsync a program makes, for comparing
 * fsbench's calls with a peer's call by call (scripts/call-times builds and runs it).
 *
 * An LD_PRELOAD library: each call is timed with clock_gettime(CLOCK_MONOTONIC) around the real
 * one (dlsym RTLD_NEXT) and logged in memory (up to 4M calls), and at exit the log is written to
 * $CALL_TIMES_OUT.<pid>, a line per call: fd, thread id, kind (r w s o c f), size (the offset for
 * lseek, the flags for open), nanoseconds, start (monotonic ns). Opens are logged only for paths
 * containing $CALL_TIMES_PATH (when set). fsbench's own code; no other tool's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int fd, tid;
    char kind;
    unsigned long size, ns, at;
} entry;

#define MAX_ENTRIES (1UL << 22)
static entry *log_;
static unsigned long used;
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_write)(int, const void *, size_t);
static off_t (*real_lseek)(int, off_t, int);
static int (*real_open)(const char *, int, ...);
static int (*real_close)(int);
static int (*real_fsync)(int);

static unsigned long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000UL + t.tv_nsec;
}

__attribute__((constructor)) static void init(void) {
    log_ = calloc(MAX_ENTRIES, sizeof(entry));
    real_read = dlsym(RTLD_NEXT, "read");
    real_write = dlsym(RTLD_NEXT, "write");
    real_lseek = dlsym(RTLD_NEXT, "lseek64");
    real_open = dlsym(RTLD_NEXT, "open64");
    real_close = dlsym(RTLD_NEXT, "close");
    real_fsync = dlsym(RTLD_NEXT, "fsync");
}

__attribute__((destructor)) static void done(void) {
    const char *p = getenv("CALL_TIMES_OUT");
    if (!p || !log_) return;
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", p, getpid());
    FILE *f = fopen(path, "w");
    if (!f) return;
    for (unsigned long i = 0; i < used && i < MAX_ENTRIES; i++)
        fprintf(f, "%d %d %c %lu %lu %lu\n", log_[i].fd, log_[i].tid, log_[i].kind, log_[i].size,
                log_[i].ns, log_[i].at);
    fclose(f);
}

static void note(int fd, char kind, unsigned long size, unsigned long t0, unsigned long t1) {
    unsigned long i = __atomic_fetch_add(&used, 1, __ATOMIC_RELAXED);
    if (!log_ || i >= MAX_ENTRIES) return;
    log_[i] = (entry){fd, gettid(), kind, size, t1 - t0, t0};
}

ssize_t read(int fd, void *b, size_t n) {
    unsigned long t0 = now();
    ssize_t r = real_read(fd, b, n);
    if (fd > 2) note(fd, 'r', n, t0, now());
    return r;
}

ssize_t write(int fd, const void *b, size_t n) {
    unsigned long t0 = now();
    ssize_t r = real_write(fd, b, n);
    if (fd > 2) note(fd, 'w', n, t0, now());
    return r;
}

off_t lseek64(int fd, off_t o, int whence) {
    unsigned long t0 = now();
    off_t r = real_lseek(fd, o, whence);
    if (fd > 2) note(fd, 's', (unsigned long)o, t0, now());
    return r;
}

off_t lseek(int fd, off_t o, int whence) { return lseek64(fd, o, whence); }

/* open's mode argument, present only with O_CREAT. */
#define MODE_OF(flags, mode)                                                                   \
    do {                                                                                       \
        if ((flags) & O_CREAT) {                                                               \
            va_list a;                                                                         \
            va_start(a, flags);                                                                \
            mode = va_arg(a, int);                                                             \
            va_end(a);                                                                         \
        }                                                                                      \
    } while (0)

int open64(const char *p, int flags, ...) {
    mode_t mode = 0;
    MODE_OF(flags, mode);
    unsigned long t0 = now();
    int r = real_open(p, flags, mode);
    const char *want = getenv("CALL_TIMES_PATH");
    if (r > 2 && (!want || strstr(p, want))) note(r, 'o', (unsigned long)flags, t0, now());
    return r;
}

int open(const char *p, int flags, ...) {
    mode_t mode = 0;
    MODE_OF(flags, mode);
    return open64(p, flags, mode);
}

int close(int fd) {
    unsigned long t0 = now();
    int r = real_close(fd);
    if (fd > 2) note(fd, 'c', 0, t0, now());
    return r;
}

int fsync(int fd) {
    unsigned long t0 = now();
    int r = real_fsync(fd);
    if (fd > 2) note(fd, 'f', 0, t0, now());
    return r;
}
