/* Linear algebra on the CPU: det, the determinant of every square matrix of
 * a batch (src/graph/infer_linalg.c). Each matrix is copied (getrf works in
 * place) and factored P A = L U by LAPACK's getrf with partial pivoting, from
 * the LAPACK that OpenBLAS ships; det = (-1)^(row swaps) * prod(diag U). A
 * singular matrix has an exact zero on U's diagonal (getrf's info > 0), so
 * its determinant is 0; M = 0 gives 1, the empty product. The matrices are
 * read row-major, i.e. LAPACK factors the transpose, which has the same
 * determinant. f16 and bf16 arrive as f32 (cpu_backend.c). */
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

/* LAPACK's Fortran interface (OpenBLAS, 32-bit integers). */
void sgetrf_(const int *m, const int *n, float *a, const int *lda, int *ipiv, int *info);
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);

ft_status cpu_det(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *xs = &in[0].shape;
    int64_t batch = (int64_t)ft_numel(&out[0].shape), m = xs->dims[xs->rank - 1], mm = m * m;
    int f64 = in[0].dtype == FT_F64, mi = (int)m;
    if (batch == 0)
        return FT_OK;
    if (m == 0) {
        for (int64_t b = 0; b < batch; b++) {
            if (f64)
                ((double *)out[0].data)[b] = 1.0;
            else
                ((float *)out[0].data)[b] = 1.0f;
        }
        return FT_OK;
    }
    size_t es = f64 ? sizeof(double) : sizeof(float);
    void *a = malloc((size_t)mm * es);
    int *piv = malloc((size_t)m * sizeof *piv);
    if (!a || !piv) {
        free(a), free(piv);
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for a %lld x %lld LU factorization",
                           (long long)m, (long long)m);
    }
    for (int64_t b = 0; b < batch; b++) {
        int info = 0;
        memcpy(a, (const char *)in[0].data + (size_t)(b * mm) * es, (size_t)mm * es);
        if (f64)
            dgetrf_(&mi, &mi, a, &mi, piv, &info);
        else
            sgetrf_(&mi, &mi, a, &mi, piv, &info);
        if (info < 0) {
            free(a), free(piv);
            return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "LAPACK getrf refused argument %d (matrix %lld, %lld x %lld)",
                               -info, (long long)b, (long long)m, (long long)m);
        }
        /* The product in the working precision, as getrf's own arithmetic. */
        int neg = 0;
        for (int i = 0; i < mi; i++)
            neg ^= piv[i] != i + 1;
        if (f64) {
            double d = 1.0;
            for (int64_t i = 0; i < m; i++)
                d *= ((const double *)a)[i * m + i];
            ((double *)out[0].data)[b] = neg ? -d : d;
        } else {
            float d = 1.0f;
            for (int64_t i = 0; i < m; i++)
                d *= ((const float *)a)[i * m + i];
            ((float *)out[0].data)[b] = neg ? -d : d;
        }
    }
    free(a), free(piv);
    return FT_OK;
}
