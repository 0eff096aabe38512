/* Value comparison for --expect, `ftrun compare`, `ftrun test` and --check:
 * pass when abs(got - want) <= atol + rtol * abs(want); NaN matches NaN;
 * an infinity matches only the same infinity. The default atol of a float
 * dtype is scaled: it is multiplied by the output's scale, max(1, the largest
 * finite abs(want)), since a value that cancels to near 0 carries the
 * rounding of terms as large as the output's largest (man/ftrun.1,
 * COMPARISON). An atol the user gives is used as it is.
 *
 *   ft_tol t = ft_tol_default(FT_F32);
 *   ft_cmp c; ft_compare(got, want, FT_F32, &shape, t, &c);  // c.n_bad == 0: pass
 *   char line[512]; ft_cmp_str(&c, FT_F32, &shape, t, line, sizeof line);
 */
#ifndef FT_COMPARE_H
#define FT_COMPARE_H

#include "../graph/dtype.h"
#include "../graph/shape.h"

typedef struct ft_tol {
    double rtol, atol;
    int scaled; /* atol is per unit of the output's scale (the float defaults) */
} ft_tol;

typedef struct ft_cmp {
    uint64_t n, n_bad;
    double max_abs, max_rel;  /* over finite pairs */
    uint64_t worst;           /* flat index of the largest abs(got - want) beyond tolerance (or first bad) */
    double worst_got, worst_want;
    uint64_t first_bad;       /* flat index of the first value out of tolerance */
    double first_got, first_want;
    double atol, scale;       /* the atol applied, and the scale it was multiplied by (1 when not scaled) */
    int shape_differs;        /* ft_compare_shaped: got has got_shape, not the expected shape (n_bad 1, no value compared) */
    ft_shape got_shape;
    const void *first_got_str, *first_want_str; /* strings: the first differing pair (const ft_str *, graph/str.h) */
} ft_cmp;

ft_tol ft_tol_default(ft_dtype dt);
/* The default of dt with the user's --rtol / --atol in place of the parts
 * given (have_rtol, have_atol). */
ft_tol ft_tol_choose(ft_dtype dt, int have_rtol, double rtol, int have_atol, double atol);
void ft_compare(const void *got, const void *want, ft_dtype dt, const ft_shape *s, ft_tol tol, ft_cmp *out);
/* The same for an output whose shape is known only at run time (got_s may
 * differ from want_s): a different shape is a mismatch (n_bad 1) that
 * ft_cmp_str reports as such. */
void ft_compare_shaped(const void *got, const ft_shape *got_s, const void *want, const ft_shape *want_s, ft_dtype dt,
                       ft_tol tol, ft_cmp *out);
/* 1 if an array of shape s can stand for tensor t: the same shape, or, for a
 * tensor whose shape is known only at run time (graph.h: FT_TF_DYNAMIC),
 * the same rank (its values are checked after the run). */
struct ft_tensor;
int ft_shape_fits(const struct ft_tensor *t, const ft_shape *s);
/* The atol of a comparison as the verdict shows it: "1e-05", or, scaled,
 * "0.000742853: 1e-05 x max |expected| 74.2853". */
const char *ft_tol_str(const ft_cmp *c, ft_tol tol, char *buf, size_t n);
/* The verdict as one line (no prefix, no newline), the same for --expect and
 * `ftrun compare`:
 *   "3 of 100 values out of tolerance (rtol=0.0001, atol=1e-05): max abs error
 *    0.5, max rel error 0.5; first at [0,1] (got 1.5, expected 1); worst at
 *    [1,2] (got 3, expected 2)"
 * or "100 values match (rtol=..., atol=...): max abs error 0, max rel error 0". */
const char *ft_cmp_str(const ft_cmp *c, ft_dtype dt, const ft_shape *s, ft_tol tol, char *buf, size_t n);

#endif
