/*
 * floor.c: fsbench's floor for the many-small-files workload. It does the least work an honest
 * run of that workload needs, so its files/s is the ceiling fsbench is held against on the same
 * filesystem and tree (scripts/bench-vs-floor builds and runs it):
 *
 *   write: for each file, open(O_CREAT|O_TRUNC), one write(), close();
 *   read:  for each file, open(), read() (once when the length is the expected one), close(),
 *          and check its CRC-32.
 *
 * Tree:    DIR/d<top>/d<sub>/f<i>, files spread evenly over TOPS x SUBS folders.
 * Sizes:   normal, mean 5500 and sd 1000 bytes, clamped to 1 KiB .. 10 KiB (as seed 003).
 * Content: a slice of a 32 MiB random pool at a per-file offset (unique and incompressible),
 *          its last 4 bytes the CRC-32 (IEEE, zlib's) of the bytes before them.
 *
 * Build:   cc -O2 -o floor bench/floor.c -lz -lm
 * Use:     floor write|read DIR FILES [TOPS] [SUBS]        (default 10 x 10)
 * Output:  one line "PHASE files=N seconds=S files_per_s=R bytes=B bad=K"; exit 1 if bad > 0.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

enum { SMALLEST = 1024, LARGEST = 10240 };
static const size_t POOL = 32u << 20;

/* splitmix64: one state word, good enough spread for sizes and offsets. */
static uint64_t state = 42;
static uint64_t rnd(void) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t file_size(void) {
    double a = ((rnd() >> 11) + 0.5) / 9007199254740992.0;
    double b = ((rnd() >> 11) + 0.5) / 9007199254740992.0;
    double s = 5500.0 + 1000.0 * sqrt(-2.0 * log(a)) * cos(6.283185307179586 * b);
    return s < SMALLEST ? SMALLEST : s > LARGEST ? LARGEST : (size_t)s;
}

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what, const char *path) {
    perror(path ? path : what);
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 4 || (strcmp(argv[1], "write") && strcmp(argv[1], "read"))) {
        fprintf(stderr, "usage: floor write|read DIR FILES [TOPS] [SUBS]\n");
        return 2;
    }
    int writing = argv[1][0] == 'w';
    const char *dir = argv[2];
    long files = atol(argv[3]);
    long tops = argc > 4 ? atol(argv[4]) : 10, subs = argc > 5 ? atol(argv[5]) : 10;
    if (files <= 0 || tops <= 0 || subs <= 0) {
        fprintf(stderr, "floor: FILES, TOPS and SUBS must be positive\n");
        return 2;
    }
    long per_sub = (files + tops * subs - 1) / (tops * subs);
    unsigned char *pool = malloc(POOL), *buf = malloc(LARGEST + 1);
    if (!pool || !buf) die("malloc", NULL);
    for (size_t i = 0; i < POOL; i += 8) {
        uint64_t v = rnd();
        memcpy(pool + i, &v, 8);
    }
    char path[4096];
    long done = 0, bad = 0;
    unsigned long long bytes = 0;
    double t0 = seconds();
    for (long u = 0; u < tops * subs && done < files; u++) {
        int n = snprintf(path, sizeof path, "%s/d%03ld", dir, u / subs);
        if (writing && mkdir(path, 0755) && u % subs == 0) die("mkdir", path);
        n += snprintf(path + n, sizeof path - n, "/d%03ld", u % subs);
        if (writing && mkdir(path, 0755)) die("mkdir", path);
        for (long i = 0; i < per_sub && done < files; i++, done++) {
            snprintf(path + n, sizeof path - n, "/f%ld", i);
            size_t size = file_size();
            if (writing) {
                size_t at = rnd() % (POOL - size);
                memcpy(buf, pool + at, size - 4);
                uint32_t crc = (uint32_t)crc32(0L, buf, (uInt)(size - 4));
                memcpy(buf + size - 4, &crc, 4);
                int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd < 0) die("open", path);
                if (write(fd, buf, size) != (ssize_t)size) die("write", path);
                if (close(fd)) die("close", path);
                bytes += size;
            } else {
                rnd(); /* the offset the writer drew */
                int fd = open(path, O_RDONLY);
                if (fd < 0) die("open", path);
                /* One read when the file has the expected length: a short read of a regular
                   file is its end. Otherwise read on to the end. */
                ssize_t got = 0, r;
                while ((r = read(fd, buf + got, LARGEST + 1 - got)) > 0) {
                    got += r;
                    if ((size_t)got == size) break;
                }
                if (r < 0) die("read", path);
                close(fd);
                uint32_t crc;
                if (got < 4 || (size_t)got != size) {
                    bad++;
                } else {
                    memcpy(&crc, buf + got - 4, 4);
                    bad += crc != (uint32_t)crc32(0L, buf, (uInt)(got - 4));
                }
                bytes += (unsigned long long)got;
            }
        }
    }
    double s = seconds() - t0;
    printf("%s files=%ld seconds=%.3f files_per_s=%.0f bytes=%llu bad=%ld\n", argv[1], done, s,
           done / s, bytes, bad);
    return bad ? 1 : 0;
}
