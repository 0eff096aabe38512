/* Fault injection for ftrun's tests: an LD_PRELOAD shim that makes the Nth
 * allocation or I/O call fail, so that every failure path can be exercised in
 * turn (tests/fault/sweep.sh drives it; see tests/fault/README.md).
 *
 *   FAULT_CLASS=alloc|io   which calls are counted (default alloc)
 *   FAULT_AT=N             the Nth counted call fails (1-based); 0 or unset: none
 *   FAULT_PERSIST=1        every counted call from the Nth on fails
 *   FAULT_COUNT=1          at exit, print "faultinject: CLASS calls: N" on stderr
 *   FAULT_VERBOSE=1        print each injected failure with its caller
 *   FAULT_LOG=FILE         append those lines (and the count) to FILE, not stderr
 *   FAULT_PROG=NAME        arm only in programs whose argv[0] ends in NAME (so that
 *                          timeout, env or the valgrind launcher run untouched)
 *   FAULT_LIBS=a,b         callers (object name prefixes) whose calls count, in
 *                          addition to the main program (default libc.so,
 *                          libcjson.so,libz.so,libprotobuf-c.so); FAULT_LIBS=all counts every caller
 *   FAULT_ONLY=a,b         count only calls from these objects ("main" is the
 *                          program): FAULT_ONLY=libz.so FAULT_AT=1 fails the
 *                          first allocation zlib makes
 *
 * Only calls made after main starts are counted (__libc_start_main is wrapped),
 * and only calls whose immediate caller lies in the program or a listed
 * library: libgomp, OpenBLAS and FFTW abort or exit on allocation failure by
 * design, so their calls are passed through rather than reported as ftrun bugs.
 * Failures carry realistic errno values: ENOMEM for allocation and mmap, EIO for
 * reading and opening for reading, ENOSPC for writing, creating and flushing.
 * The counter is atomic (OpenMP workers allocate too) and survives the one
 * execv ftrun may do at start (its BLAS kernel selection) through FAULT_BASE. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

enum { CLASS_ALLOC, CLASS_IO };

static int fi_class = CLASS_ALLOC;
static long fi_at;            /* 0: never fail */
static int fi_persist, fi_count, fi_verbose, fi_all;
static volatile int fi_armed; /* set once main runs */
static long fi_base;          /* calls counted before an exec of this process */
static long fi_calls;         /* atomic */
static volatile int fi_ready;

static __thread int in_shim __attribute__((tls_model("initial-exec")));
/* Set in the main thread and in a new thread once its own start routine runs:
 * what a thread library or a sanitizer does to start a thread (reading
 * /proc/self/maps for the stack bounds, ...) happens at a moment that varies
 * from run to run, and counting it would make the Nth call a different call
 * each time. */
static __thread int thread_ready __attribute__((tls_model("initial-exec")));

/* Address ranges of the objects whose calls count. */
#define MAX_RANGES 64
static struct {
    uintptr_t lo, hi;
} ranges[MAX_RANGES];
static int n_ranges;
static char libs[512] = "libc.so,libcjson.so,libz.so,libprotobuf-c.so";
static int count_main = 1;

/* ---- the real functions ---- */

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static char *(*real_strdup)(const char *);
static char *(*real_strndup)(const char *, size_t);
static FILE *(*real_fopen)(const char *, const char *);
static FILE *(*real_fopen64)(const char *, const char *);
static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_pread64)(int, void *, size_t, off_t);
static size_t (*real_fread)(void *, size_t, size_t, FILE *);
static ssize_t (*real_write)(int, const void *, size_t);
static size_t (*real_fwrite)(const void *, size_t, size_t, FILE *);
static int (*real_fflush)(FILE *);
static int (*real_fclose)(FILE *);
static int (*real_rename)(const char *, const char *);
static int (*real_mkdir)(const char *, mode_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static void *(*real_mmap64)(void *, size_t, int, int, int, off_t);
static DIR *(*real_opendir)(const char *);
static int (*real_execv)(const char *, char *const[]);
static int (*real_execve)(const char *, char *const[], char *const[]);
static int (*real_start_main)(int (*)(int, char **, char **), int, char **, void (*)(void), void (*)(void),
                              void (*)(void), void *);

/* dlsym allocates (its error buffer): those requests are served from here. */
static char boot_buf[65536] __attribute__((aligned(64)));
static size_t boot_used;

static int is_boot(const void *p) { return (const char *)p >= boot_buf && (const char *)p < boot_buf + sizeof boot_buf; }

static void *boot_alloc(size_t n)
{
    size_t at = (__atomic_fetch_add(&boot_used, (n + 63) & ~(size_t)63, __ATOMIC_RELAXED));
    if (at + n > sizeof boot_buf)
        return NULL;
    return boot_buf + at; /* zeroed: static storage, never reused */
}

static int resolving;

static void resolve(void)
{
    if (fi_ready || resolving)
        return;
    resolving = 1;
#define R(name) real_##name = dlsym(RTLD_NEXT, #name)
    R(malloc);
    R(calloc);
    R(realloc);
    R(free);
    R(posix_memalign);
    R(aligned_alloc);
    R(memalign);
    R(strdup);
    R(strndup);
    R(fopen);
    R(fopen64);
    R(open);
    R(open64);
    R(openat);
    R(openat64);
    R(read);
    R(pread);
    R(pread64);
    R(fread);
    R(write);
    R(fwrite);
    R(fflush);
    R(fclose);
    R(rename);
    R(mkdir);
    R(mmap);
    R(mmap64);
    R(opendir);
    R(execv);
    R(execve);
#undef R
    real_start_main = dlsym(RTLD_NEXT, "__libc_start_main");
    fi_ready = 1;
    resolving = 0;
}

/* ---- messages without allocating ---- */

static char log_path[1024];

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 1)
        n = (int)sizeof buf - 1;
    if (n <= 0)
        return;
    if (!*log_path) {
        (void)!syscall(SYS_write, 2, buf, (size_t)n);
        return;
    }
    long fd = syscall(SYS_openat, AT_FDCWD, log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
        (void)!syscall(SYS_write, (int)fd, buf, (size_t)n);
        syscall(SYS_close, (int)fd);
    }
}

/* ---- deciding ---- */

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    int want = !*name && count_main; /* the main program */
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    if (strstr(base, "faultinject"))
        return 0;
    for (const char *p = libs; *p && !want;) {
        size_t l = strcspn(p, ",");
        if (l && strncmp(base, p, l) == 0)
            want = 1;
        p += l + (p[l] == ',');
    }
    if (!want)
        return 0;
    for (int i = 0; i < info->dlpi_phnum && n_ranges < MAX_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        ranges[n_ranges].lo = info->dlpi_addr + ph->p_vaddr;
        ranges[n_ranges].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        n_ranges++;
    }
    return 0;
}

static int counted_caller(const void *ra)
{
    if (fi_all)
        return 1;
    uintptr_t a = (uintptr_t)ra;
    for (int i = 0; i < n_ranges; i++)
        if (a >= ranges[i].lo && a < ranges[i].hi)
            return 1;
    return 0;
}

static void describe(const void *ra, char *buf, size_t n)
{
    Dl_info di;
    if (dladdr(ra, &di) && di.dli_fname) {
        const char *b = strrchr(di.dli_fname, '/');
        snprintf(buf, n, "%s+0x%lx (%s)", b ? b + 1 : di.dli_fname, (unsigned long)((uintptr_t)ra - (uintptr_t)di.dli_fbase),
                 di.dli_sname ? di.dli_sname : "?");
    } else {
        snprintf(buf, n, "%p", ra);
    }
}

/* Counts the call and says whether it must fail. */
static int should_fail(int cls, const char *what, const void *ra)
{
    if (!fi_armed || cls != fi_class || in_shim || !thread_ready || !counted_caller(ra))
        return 0;
    long n = __atomic_add_fetch(&fi_calls, 1, __ATOMIC_RELAXED);
    int fail = fi_at > 0 && (n == fi_at || (fi_persist && n > fi_at));
    if (fail && fi_verbose) {
        in_shim++;
        char c[256];
        describe(ra, c, sizeof c);
        say("faultinject: call %ld (%s) fails, called from %s\n", n, what, c);
        in_shim--;
    }
    return fail;
}

#define RA __builtin_return_address(0)

static long env_long(const char *name)
{
    const char *s = getenv(name);
    return s ? strtol(s, NULL, 10) : 0;
}

static void report(void)
{
    if (fi_count && fi_armed)
        say("faultinject: %s calls: %ld\n", fi_class == CLASS_IO ? "io" : "alloc", __atomic_load_n(&fi_calls, __ATOMIC_RELAXED));
}

__attribute__((constructor)) static void fi_init(void)
{
    resolve();
    const char *c = getenv("FAULT_CLASS");
    fi_class = c && !strcmp(c, "io") ? CLASS_IO : CLASS_ALLOC;
    fi_at = env_long("FAULT_AT");
    fi_persist = env_long("FAULT_PERSIST") != 0;
    fi_count = env_long("FAULT_COUNT") != 0;
    fi_verbose = env_long("FAULT_VERBOSE") != 0;
    fi_base = env_long("FAULT_BASE");
    const char *lp = getenv("FAULT_LOG");
    if (lp)
        snprintf(log_path, sizeof log_path, "%s", lp);
    const char *l = getenv("FAULT_LIBS"), *only = getenv("FAULT_ONLY");
    if (only) {
        snprintf(libs, sizeof libs, "%s", only);
        count_main = 0;
        for (const char *p = libs; *p;) {
            size_t k = strcspn(p, ",");
            if (k == 4 && !strncmp(p, "main", 4))
                count_main = 1;
            p += k + (p[k] == ',');
        }
    } else if (l && !strcmp(l, "all")) {
        fi_all = 1;
    } else if (l) {
        snprintf(libs, sizeof libs, "%s", l);
    }
}

static int (*user_main)(int, char **, char **);

static int prog_matches(const char *argv0)
{
    const char *want = getenv("FAULT_PROG");
    if (!want || !*want)
        return 1;
    size_t a = argv0 ? strlen(argv0) : 0, w = strlen(want);
    return a >= w && strcmp(argv0 + a - w, want) == 0 && (a == w || argv0[a - w - 1] == '/');
}

static int wrapped_main(int argc, char **argv, char **envp)
{
    thread_ready = 1;
    if (!prog_matches(argc > 0 ? argv[0] : NULL))
        return user_main(argc, argv, envp);
    dl_iterate_phdr(phdr_cb, NULL);
    fi_calls = fi_base;
    fi_armed = 1;
    atexit(report); /* registered before main's own, so it runs last */
    return user_main(argc, argv, envp);
}

/* Thread starts: the start routine runs with thread_ready set. A fixed pool
 * of slots (no allocation here); a slot is read before its thread can be
 * reused, as no program starts this many threads at once. */
#define N_STARTS 4096
static struct start_slot {
    void *(*fn)(void *);
    void *arg;
} starts[N_STARTS];
static unsigned n_starts;

static void *start_wrapped(void *p)
{
    struct start_slot *sl = p;
    void *(*fn)(void *) = sl->fn;
    void *arg = sl->arg;
    thread_ready = 1;
    return fn(arg);
}

EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    if (!real)
        real = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(RTLD_NEXT, "pthread_create");
    struct start_slot *sl = &starts[__atomic_fetch_add(&n_starts, 1, __ATOMIC_RELAXED) % N_STARTS];
    sl->fn = fn;
    sl->arg = arg;
    return real(t, attr, start_wrapped, sl);
}

EXPORT int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv, void (*init)(void),
                             void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    resolve();
    user_main = main;
    return real_start_main(wrapped_main, argc, argv, init, fini, rtld_fini, stack_end);
}

/* The count goes on in the new image (ftrun executes itself once at most). */
static void pass_count(void)
{
    if (!fi_armed)
        return;
    in_shim++;
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", __atomic_load_n(&fi_calls, __ATOMIC_RELAXED));
    setenv("FAULT_BASE", buf, 1);
    in_shim--;
}

EXPORT int execv(const char *path, char *const argv[])
{
    resolve();
    pass_count();
    return real_execv(path, argv);
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    resolve();
    /* an explicit environment is the caller's: only execv passes the count */
    return real_execve(path, argv, envp);
}

/* ---- allocation ---- */

EXPORT void *malloc(size_t n)
{
    if (!fi_ready) {
        if (resolving)
            return boot_alloc(n);
        resolve();
    }
    if (should_fail(CLASS_ALLOC, "malloc", RA)) {
        errno = ENOMEM;
        return NULL;
    }
    return real_malloc(n);
}

EXPORT void *calloc(size_t n, size_t s)
{
    if (!fi_ready) {
        if (resolving)
            return boot_alloc(n * s);
        resolve();
    }
    if (should_fail(CLASS_ALLOC, "calloc", RA)) {
        errno = ENOMEM;
        return NULL;
    }
    return real_calloc(n, s);
}

EXPORT void *realloc(void *p, size_t n)
{
    if (!fi_ready)
        resolve();
    if (is_boot(p)) {
        void *q = real_malloc(n);
        if (q)
            memcpy(q, p, n < (size_t)(boot_buf + sizeof boot_buf - (char *)p) ? n : (size_t)(boot_buf + sizeof boot_buf - (char *)p));
        return q;
    }
    if (should_fail(CLASS_ALLOC, "realloc", RA)) {
        errno = ENOMEM;
        return NULL;
    }
    return real_realloc(p, n);
}

EXPORT void free(void *p)
{
    if (!p || is_boot(p))
        return;
    if (!fi_ready)
        resolve();
    real_free(p);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_ALLOC, "posix_memalign", RA))
        return ENOMEM;
    return real_posix_memalign(out, align, n);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_ALLOC, "aligned_alloc", RA)) {
        errno = ENOMEM;
        return NULL;
    }
    return real_aligned_alloc(align, n);
}

EXPORT void *memalign(size_t align, size_t n)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_ALLOC, "memalign", RA)) {
        errno = ENOMEM;
        return NULL;
    }
    return real_memalign(align, n);
}

/* glibc's strdup allocates through malloc, which is interposed: these only
 * make the program's own call the counted one (and not libc's inner malloc). */
EXPORT char *strdup(const char *s)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_ALLOC, "strdup", RA)) {
        errno = ENOMEM;
        return NULL;
    }
    in_shim++;
    char *d = real_strdup(s);
    in_shim--;
    return d;
}

EXPORT char *strndup(const char *s, size_t n)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_ALLOC, "strndup", RA)) {
        errno = ENOMEM;
        return NULL;
    }
    in_shim++;
    char *d = real_strndup(s, n);
    in_shim--;
    return d;
}

/* ---- I/O ---- */

#define IO_ERR_SEEN 0x20 /* glibc's _IO_ERR_SEEN: what ferror() tests */
#define IO_NO_WRITES 0x8 /* glibc's _IO_NO_WRITES: a stream opened for reading only */

static void set_error(FILE *f)
{
    if (f)
        f->_flags |= IO_ERR_SEEN;
}

static int writes(const char *mode) { return strchr(mode, 'w') || strchr(mode, 'a') || strchr(mode, '+'); }

/* open_memstream and fmemopen streams (no _IO_IS_FILEBUF: no file behind
 * them) fail for want of memory, never of disk space. */
#define IO_IS_FILEBUF 0x2000
static int in_memory(FILE *f) { return f && !(f->_flags & IO_IS_FILEBUF); }

EXPORT FILE *fopen(const char *path, const char *mode)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_IO, writes(mode) ? "fopen:w" : "fopen:r", RA)) {
        errno = writes(mode) ? ENOSPC : EIO;
        return NULL;
    }
    return real_fopen(path, mode);
}

EXPORT FILE *fopen64(const char *path, const char *mode)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_IO, writes(mode) ? "fopen:w" : "fopen:r", RA)) {
        errno = writes(mode) ? ENOSPC : EIO;
        return NULL;
    }
    return real_fopen64(path, mode);
}

static int open_errno(int flags) { return (flags & (O_WRONLY | O_RDWR | O_CREAT)) ? ENOSPC : EIO; }

#define OPEN_BODY(what, call)                                                                                          \
    mode_t mode = 0;                                                                                                   \
    if (flags & (O_CREAT | O_TMPFILE)) {                                                                               \
        va_list ap;                                                                                                    \
        va_start(ap, flags);                                                                                           \
        mode = (mode_t)va_arg(ap, int);                                                                                \
        va_end(ap);                                                                                                    \
    }                                                                                                                  \
    if (!fi_ready)                                                                                                     \
        resolve();                                                                                                     \
    if (should_fail(CLASS_IO, open_errno(flags) == EIO ? what ":r" : what ":w", RA)) {                                 \
        errno = open_errno(flags);                                                                                     \
        return -1;                                                                                                     \
    }                                                                                                                  \
    return call;

EXPORT int open(const char *path, int flags, ...) { OPEN_BODY("open", real_open(path, flags, mode)) }
EXPORT int open64(const char *path, int flags, ...) { OPEN_BODY("open", real_open64(path, flags, mode)) }
EXPORT int openat(int dfd, const char *path, int flags, ...) { OPEN_BODY("openat", real_openat(dfd, path, flags, mode)) }
EXPORT int openat64(int dfd, const char *path, int flags, ...) { OPEN_BODY("openat", real_openat64(dfd, path, flags, mode)) }

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_IO, "read", RA)) {
        errno = EIO;
        return -1;
    }
    return real_read(fd, buf, n);
}

EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_IO, "pread", RA)) {
        errno = EIO;
        return -1;
    }
    return real_pread(fd, buf, n, off);
}

EXPORT ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_IO, "pread", RA)) {
        errno = EIO;
        return -1;
    }
    return real_pread64(fd, buf, n, off);
}

EXPORT size_t fread(void *buf, size_t size, size_t n, FILE *f)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_IO, "fread", RA)) {
        set_error(f);
        errno = EIO;
        return 0;
    }
    return real_fread(buf, size, n, f);
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_IO, "write", RA)) {
        errno = ENOSPC;
        return -1;
    }
    return real_write(fd, buf, n);
}

EXPORT size_t fwrite(const void *buf, size_t size, size_t n, FILE *f)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_IO, in_memory(f) ? "fwrite:m" : "fwrite", RA)) {
        set_error(f);
        errno = in_memory(f) ? ENOMEM : ENOSPC;
        return 0;
    }
    return real_fwrite(buf, size, n, f);
}

EXPORT int fflush(FILE *f)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_IO, in_memory(f) ? "fflush:m" : "fflush", RA)) {
        set_error(f);
        errno = in_memory(f) ? ENOMEM : ENOSPC;
        return EOF;
    }
    return real_fflush(f);
}

EXPORT int fclose(FILE *f)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_IO, in_memory(f) ? "fclose:m" : f && (f->_flags & IO_NO_WRITES) ? "fclose:r" : "fclose:w", RA)) {
        /* as when the final flush fails: the stream is closed all the same */
        int mem = in_memory(f);
        real_fclose(f);
        errno = mem ? ENOMEM : ENOSPC;
        return EOF;
    }
    return real_fclose(f);
}

EXPORT int rename(const char *from, const char *to)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_IO, "rename", RA)) {
        errno = EIO;
        return -1;
    }
    return real_rename(from, to);
}

EXPORT int mkdir(const char *path, mode_t mode)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_IO, "mkdir", RA)) {
        errno = ENOSPC;
        return -1;
    }
    return real_mkdir(path, mode);
}

/* Only mappings of files count: anonymous ones are the allocators' business. */
EXPORT void *mmap(void *addr, size_t n, int prot, int flags, int fd, off_t off)
{
    if (!fi_ready)
        resolve();
    if (!(flags & MAP_ANONYMOUS) && fd >= 0 && should_fail(CLASS_IO, "mmap", RA)) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    return real_mmap(addr, n, prot, flags, fd, off);
}

EXPORT void *mmap64(void *addr, size_t n, int prot, int flags, int fd, off_t off)
{
    if (!fi_ready)
        resolve();
    if (!(flags & MAP_ANONYMOUS) && fd >= 0 && should_fail(CLASS_IO, "mmap", RA)) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    return real_mmap64(addr, n, prot, flags, fd, off);
}

EXPORT DIR *opendir(const char *path)
{
    if (!fi_ready)
        resolve();
    if (should_fail(CLASS_IO, "opendir", RA)) {
        errno = EIO;
        return NULL;
    }
    return real_opendir(path);
}
