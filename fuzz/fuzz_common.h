/* Shared setup of the libFuzzer harnesses in fuzz/ (fuzz/README.md): sanitizer
 * defaults and a scratch folder holding the small value files a graph's
 * "file" sources may name. Included by each harness, nothing else. */
#ifndef FT_FUZZ_COMMON_H
#define FT_FUZZ_COMMON_H

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A graph may legitimately declare a tensor of many GiB; ftrun then reports
 * "out of memory" (exit 4) instead of crashing. Allocations above 64 MiB fail
 * here so that path is exercised quickly instead of filling gigabytes and
 * tripping libFuzzer's RSS limit or -timeout. (libFuzzer's own tables take
 * some 20 MiB at start, which is why the limit is not lower.) */
#ifndef FZ_MAX_ALLOC_MB
#define FZ_MAX_ALLOC_MB "64" /* a harness may set its own before including this */
#endif
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1:max_allocation_size_mb=" FZ_MAX_ALLOC_MB ":detect_leaks=1:"
           "handle_abort=1:print_summary=1";
}

const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) { return "print_stacktrace=1:halt_on_error=1"; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char fz_dir[64];

static void fz_rmdir(const char *dir)
{
    static const char *const names[] = {"w.bin", "w.npy", "graph.json", "graph.ftg", "model.onnx"};
    char p[128];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

static void fz_cleanup(void) { fz_rmdir(fz_dir); }

/* A crashing run never reaches its atexit handler: remove the folders of
 * harness processes that no longer exist. */
static void fz_remove_stale(const char *tmp)
{
    DIR *d = opendir(tmp);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        if (strncmp(e->d_name, "ftrun-fuzz-", 11) != 0)
            continue;
        long pid = strtol(e->d_name + 11, &end, 10);
        if (*end || pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH)) {
            char p[128];
            snprintf(p, sizeof p, "%s/%s", tmp, e->d_name);
            if (!*end && pid > 0)
                fz_rmdir(p);
        }
    }
    closedir(d);
}

__attribute__((unused)) static int fz_write(const char *name, const void *buf, size_t n)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", fz_dir, name);
    FILE *f = fopen(p, "wb");
    if (!f)
        return -1;
    size_t w = n ? fwrite(buf, 1, n, f) : 0;
    return (fclose(f) != 0 || w != n) ? -1 : 0;
}

/* The scratch folder ftrun-fuzz-PID ($TMPDIR, else /dev/shm, else /tmp): w.bin (256 raw bytes) and w.npy (f32 [4,4], 0..15), the
 * names json.dict offers for "file". */
__attribute__((unused)) static void fz_setup(void)
{
    /* tmpfs when there is one: the ftg harness writes its input there every run */
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp || strlen(tmp) >= 32)
        tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    fz_remove_stale(tmp);
    snprintf(fz_dir, sizeof fz_dir, "%s/ftrun-fuzz-%ld", tmp, (long)getpid());
    if (mkdir(fz_dir, 0700) != 0 && errno != EEXIST) {
        perror(fz_dir);
        abort();
    }
    atexit(fz_cleanup);
    unsigned char raw[256];
    for (int i = 0; i < 256; i++)
        raw[i] = (unsigned char)(i * 37 + 11);
    static const char hdr[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }";
    unsigned char npy[128 + 64] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 118, 0};
    memset(npy + 10, ' ', 118);
    memcpy(npy + 10, hdr, sizeof hdr - 1);
    npy[127] = '\n';
    for (int i = 0; i < 16; i++) {
        float v = (float)i;
        memcpy(npy + 128 + 4 * i, &v, 4);
    }
    if (fz_write("w.bin", raw, sizeof raw) || fz_write("w.npy", npy, sizeof npy)) {
        perror("writing the fuzz scratch files");
        abort();
    }
}

#endif
