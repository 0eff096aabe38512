/* Value comparison for --expect (and later --check and `ftrun compare`):
 * pass when abs(got - want) <= atol + rtol * abs(want); NaN matches NaN;
 * an infinity matches only the same infinity.
 *
 *   ft_tol t = ft_tol_default(FT_F32);
 *   ft_cmp c; ft_compare(got, want, FT_F32, &shape, t, &c);  c.n_bad == 0 -> pass
 */
#ifndef FT_COMPARE_H
#define FT_COMPARE_H

#include "../graph/dtype.h"
#include "../graph/shape.h"

typedef struct ft_tol {
    double rtol, atol;
} ft_tol;

typedef struct ft_cmp {
    uint64_t n, n_bad;
    double max_abs, max_rel;  /* over finite pairs */
    uint64_t worst;           /* flat index of the largest abs(got - want) beyond tolerance (or first bad) */
    double worst_got, worst_want;
    uint64_t first_bad;
} ft_cmp;

ft_tol ft_tol_default(ft_dtype dt);
void ft_compare(const void *got, const void *want, ft_dtype dt, const ft_shape *s, ft_tol tol, ft_cmp *out);
/* "[1,2]" for a flat index into shape s. buf must hold FT_SHAPE_STR bytes. */
const char *ft_index_str(uint64_t flat, const ft_shape *s, char *buf);

#endif
