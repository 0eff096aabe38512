/* The tuning cache: the CPU convs' timed choices of form (conv_dnnl.c),
 * kept in a JSON file from one process to the next (--tuning-cache FILE,
 * read and written by cli/tuning_file.c; the format is in ftrun(1), FILES).
 *
 * A table maps a key (what decides a conv's pick: its op, shapes, dtype,
 * params, fused activation and residual sum, the layouts of its tensors in
 * the run, the thread count; cpu_tuning_conv_key) to the form picked
 * ("plain", "blocked", "blocked-add" or "native") and each timed form's time.
 * Its header names the machine and the build the picks were timed with
 * (cpu_tuning_machine): a file with another header gives an empty table,
 * marked stale, whose picks replace the file's.
 *
 * Ownership: ft_tuning_parse makes the table; its caller frees it with
 * ft_tuning_free (after closing every backend context it was lent to through
 * ft_backend_opts.tuning). ft_tuning_json's text is the caller's (free()).
 * A table is used by one thread at a time.
 *
 *   ft_tuning *t;
 *   ft_error err = {0};
 *   char why[256];
 *   if (ft_tuning_parse("tune.json", NULL, 0, &t, why, sizeof why, &err)) return err.code;  // no file yet
 *   ft_tuning_put(t, "conv f32 ...", "blocked", NULL);
 *   const char *pick = ft_tuning_get(t, "conv f32 ...");   // "blocked"
 *   char *text = ft_tuning_json(t);                         // the file's new contents
 *   free(text);
 *   ft_tuning_free(t);
 */
#ifndef FT_CPU_TUNING_H
#define FT_CPU_TUNING_H

#include <stddef.h>

#include "../runtime/backend.h"

/* The file's "format" value. */
#define FT_TUNING_FORMAT "ftrun-tuning-cache/1"

/* The table of the file `name` from its text (n bytes; text NULL: no file,
 * an empty table). A file that is not JSON, or whose fields are missing, of
 * the wrong type or unknown, is FT_EGRAPH with err naming the file and the
 * field. A file recorded on another machine or build gives an empty table
 * and says why in why[] (what differs, for a warning); why[0] is 0
 * otherwise. FT_ERUNTIME when out of memory. */
ft_status ft_tuning_parse(const char *name, const char *text, size_t n, ft_tuning **out, char *why, size_t why_cap,
                          ft_error *err);
/* The pick recorded for key, or NULL. */
const char *ft_tuning_get(const ft_tuning *t, const char *key);
/* Records key's pick (replacing one recorded before) and, when ms is not
 * NULL, each form's time in ms (ms[i] < 0: not timed) for forms named
 * "plain", "blocked", "blocked-add", "native" in that order. -1 when out of
 * memory, 0 otherwise. */
int ft_tuning_put(ft_tuning *t, const char *key, const char *pick, const double *ms);
/* The number of picks recorded by ft_tuning_put since the table was read. */
int ft_tuning_added(const ft_tuning *t);
/* The file's contents for the table: this machine's header and every entry,
 * the file's first; NULL when out of memory. */
char *ft_tuning_json(const ft_tuning *t);
void ft_tuning_free(ft_tuning *t);

/* The key of an f32 conv node n run on in[] / out[] at `threads` threads
 * with its input 0, residual sum (input 3) and output in the layouts named
 * lay[0..2] ("plain", "blocked", "blocked (copy)"; lay[1] NULL or "" when
 * there is no sum), written to buf: 0, or -1 when it does not fit. */
int cpu_tuning_conv_key(const ft_node *n, const ft_view *in, const ft_view *out, int threads, const char *const lay[3],
                        char *buf, size_t cap);

#endif
