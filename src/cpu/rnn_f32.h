/* The f32 recurrence of lstm, gru and rnn with the default activations
 * (rnn_f32.c), called by cpu_rnn (rnn.c) once per direction.
 *
 * Ownership: every pointer is the caller's; the work buffer (floats, size
 * from cpu_rnn_f32_work) too, and it holds nothing across calls. What
 * cpu_rnn_f32_rp returns is the backend context's.
 *
 *   if (cpu_rnn_f32_ok(n)) {
 *       float *work = ft_malloc(cpu_rnn_f32_work(T, B, H, G));
 *       ft_rnn_f32 a = {.T = T, .B = B, ...};
 *       int rc = cpu_rnn_f32_dir(n, &a, work);   // 0, or cpu_sgemm's error code
 *   }
 */
#ifndef FT_CPU_RNN_F32_H
#define FT_CPU_RNN_F32_H

#include "cpu.h"

typedef struct ft_rnn_f32 {
    int64_t T, B, H, G, NI, D; /* steps, batch, hidden, gates, input size (complex.h takes I), directions */
    int64_t d;                /* this direction */
    int threads;              /* threads for the steps (1: this thread only) */
    int rev, layout, input_forget, linear_before_reset;
    float clip;                   /* pre-activations are clipped to [-clip, clip]; +inf: no clip */
    const int64_t *len;           /* [B] steps run per batch entry */
    const float *x, *w, *r;       /* X, W [D, G*H, I], R [D, G*H, H] */
    const float *rp;              /* R^T of this direction packed (cpu_rnn_f32_rp), or NULL: packed in the work buffer */
    const float *bias;            /* [G*H] added to X W^T (gru linear_before_reset: Wb only for the h gate) */
    const float *rbh;             /* [H] gru linear_before_reset: Rbh; else unread */
    const float *h0, *c0;         /* [B, H] initial state and cell of this direction */
    const float *peep;            /* [3*H] lstm peepholes i, o, f of this direction, or NULL */
    float *y;                     /* Y, zeroed, in its layout */
    float *hn, *cn;               /* [B, H] final state and cell */
} ft_rnn_f32;

/* 1 when node n's activations are the defaults this form runs. */
int cpu_rnn_f32_ok(const ft_node *n);
/* Bytes of the work buffer for T steps, batch B, H hidden units, G gates. */
size_t cpu_rnn_f32_work(int64_t T, int64_t B, int64_t H, int64_t G);
/* Floats of R^T packed for the steps, one direction (rnn_f32.c: pack). */
int64_t cpu_rnn_f32_rp_floats(int64_t G, int64_t H);
/* R^T of every direction packed, D x cpu_rnn_f32_rp_floats(G, H) floats,
 * kept per node while R (input 2) is a constant of the graph (the
 * CPU_DNNL_RNN cache of dnnl_cache.h, freed with the backend context); NULL
 * when R is not constant or memory is short. */
const float *cpu_rnn_f32_rp(ft_kctx *k, const ft_node *n, const ft_view *in, int64_t D, int64_t G, int64_t H);
/* One direction; 0 or cpu_sgemm's error code. */
int cpu_rnn_f32_dir(const ft_node *n, const ft_rnn_f32 *a, float *work);

#endif
