/* Kernel-side planning of reductions (reduce_*, argmax/argmin, cumsum),
 * defined in infer_math.c beside their inference and shared by the cpu
 * (cpu/reduce.c) and cuda (cuda/reduce.cu) kernels so that both backends
 * split and merge dims identically; callers own every struct. The reduced
 * axes come from the node's typed parameters (params.h).
 *
 *   ft_rplan p;
 *   ft_reduce_plan(&x->shape, n->params.reduce.red, &p);
 */
#ifndef FT_INFER_MATH_H
#define FT_INFER_MATH_H

#include "ops.h"

typedef enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_SUMSQ, R_LSE, R_LOGSUM } ft_rop;
/* What is accumulated per element. */
typedef enum { K_SUM, K_ABS, K_SQ, K_MAX, K_MIN, K_PROD, K_EXP } ft_rkind;

/* A reduction over a shape with size-1 dims dropped and adjacent kept /
 * reduced dims merged. The innermost merged group (stride 1) is either kept
 * (inner > 1, the columns layout) or reduced (L, the runs layout). */
typedef struct {
    int nk, nr;                             /* outer kept groups (without inner), reduced groups (without the run) */
    int64_t kdim[FT_MAX_RANK], kstr[FT_MAX_RANK];
    int64_t rdim[FT_MAX_RANK], rstr[FT_MAX_RANK];
    int64_t inner;                          /* columns: length of the innermost kept group; else 1 */
    int64_t L;                              /* runs: length of the innermost reduced group; else 1 */
    int64_t nouter;                         /* product of kdim */
    int64_t nred;                           /* elements reduced into each output */
} ft_rplan;

ft_rop ft_reduce_op(ft_op op);
ft_rkind ft_reduce_kind(ft_rop op);
/* The plan for a shape without zero dims. */
void ft_reduce_plan(const ft_shape *s, const int *red, ft_rplan *p);
/* Value of a reduction over the empty set, as a double to be stored in dt. */
double ft_reduce_identity(ft_rop op, ft_dtype dt);
/* matmul's output shape (numpy.matmul) from inputs ia and ib of the node,
 * with the messages naming them; shared with matmul_integer and
 * qlinear_matmul (infer_quant.c). */
ft_status ft_infer_matmul_shape(ft_infer_ctx *c, int ia, int ib, ft_shape *out);
/* Split shape s around axis into (outer, len, inner). */
void ft_reduce_around_axis(const ft_shape *s, int axis, int64_t *outer, int64_t *len, int64_t *inner);

#endif
