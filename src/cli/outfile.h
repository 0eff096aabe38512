/* Every file ftrun writes goes through here: results, timing.json, traces,
 * packed and unpacked graphs.
 *
 * A regular file (or a name that does not exist yet) is written to a
 * temporary file created exclusively, with an unpredictable name
 * (O_CREAT|O_EXCL|O_NOFOLLOW, never following a planted link), in the
 * target's folder, and renamed over the target when complete: a failed or
 * interrupted run leaves no partial file under a final name. A symlink to a
 * regular file is kept: its target is replaced. A FIFO or character device,
 * or a symlink to one (/dev/stdout, /proc/self/fd/1), is written in place and
 * never replaced. With FT_OUT_DASH, "-" is standard output. A directory, a
 * socket, a block device or a missing folder is an error (FT_ERUNTIME), which
 * ft_outfile_check reports before anything runs.
 *
 * Ownership: an ft_outfile owns its FILE and names from ft_outfile_open until
 * ft_outfile_commit or ft_outfile_abort (both release everything); an
 * ft_outset owns its members until ft_outset_commit or ft_outset_abort.
 *
 *   ft_outfile o;
 *   if (ft_outfile_open(&o, "m.ftg", FT_OUT_DASH, &err)) return err.code;
 *   fputs("...", o.f);
 *   if (ft_outfile_commit(&o, &err)) return err.code;   // renamed into place
 *
 *   ft_outset s = {0};   // several files in a folder, renamed together
 *   if (ft_outset_text(&s, "out", "timing.json", text, &err) || ft_outset_commit(&s, &err))
 *       ft_outset_abort(&s);
 */
#ifndef FT_OUTFILE_H
#define FT_OUTFILE_H

#include <stdio.h>

#include "../io/npy.h"
#include "../io/npz.h"
#include "../runtime/exec.h" /* ft_stop_signal */

enum { FT_OUT_DASH = 1 /* "-" means standard output */ };

typedef struct ft_outfile {
    FILE *f;        /* write here */
    char *path;     /* the target as given (for messages) */
    char *dest;     /* what the temporary file is renamed to (path, or a symlink's target) */
    char *tmp;      /* the temporary file; NULL when written in place */
    int to_stdout;  /* "-" */
} ft_outfile;

/* Can PATH be written? Checked before anything runs: the folder exists and
 * takes a new file, the target is not a directory or a socket. */
ft_status ft_outfile_check(const char *path, unsigned flags, ft_error *err);
ft_status ft_outfile_open(ft_outfile *o, const char *path, unsigned flags, ft_error *err);
/* Flush and close; a temporary file stays under its temporary name. */
ft_status ft_outfile_close(ft_outfile *o, ft_error *err);
/* Close (if still open) and rename into place; releases o either way (a
 * failed commit removes the temporary file). */
ft_status ft_outfile_commit(ft_outfile *o, ft_error *err);
/* Close, remove the temporary file, release o. */
void ft_outfile_abort(ft_outfile *o);
/* Remove every temporary file still being written; async-signal-safe (the
 * handler of a second SIGINT or SIGTERM calls it before ending ftrun). */
void ft_outfile_remove_live(void);
/* Write text to PATH through an ft_outfile. */
ft_status ft_outfile_write_text(const char *path, unsigned flags, const char *text, ft_error *err);

/* An output folder, before anything runs: it exists and takes a new file, or
 * the nearest existing folder above it can be written (it is created later by
 * ft_mkdirs); each of the n names (may be 0) in it is a writable target. */
ft_status ft_outdir_check(const char *dir, const char *const *names, int n, ft_error *err);
/* A file to be written in a folder that is created when missing (convert
 * -o): ft_outdir_check of its folder and name. */
ft_status ft_outpath_check(const char *path, ft_error *err);
/* Create DIR (and parents). */
ft_status ft_mkdirs(const char *dir, ft_error *err);

/* A set of files in one folder, written under temporary names and renamed
 * together. */
typedef struct ft_outset {
    int n, cap;
    ft_outfile *f;
} ft_outset;
ft_status ft_outset_npy(ft_outset *s, const char *dir, const char *fname, ft_dtype dt, const ft_shape *shape,
                        const void *data, ft_error *err);
ft_status ft_outset_text(ft_outset *s, const char *dir, const char *fname, const char *text, ft_error *err);
/* An .npz of n arrays (see npz.h). */
/* An ONNX TensorProto file (.pb) holding tensor `name`. */
ft_status ft_outset_pb(ft_outset *s, const char *dir, const char *fname, const char *name, ft_dtype dt,
                       const ft_shape *shape, const void *data, ft_error *err);
ft_status ft_outset_npz(ft_outset *s, const char *dir, const char *fname, const ft_npz_item *items, int n, ft_error *err);
/* Rename every temporary file to its final name; on failure remove them all. */
ft_status ft_outset_commit(ft_outset *s, ft_error *err);
/* Remove every temporary file (used on failure). */
void ft_outset_abort(ft_outset *s);

#endif
