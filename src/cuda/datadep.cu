/* The CUDA kernel of the data-dependent ops (non_zero, compress, unique,
 * non_max_suppression). Their output sizes must reach the host before
 * anything downstream can be placed, so the stream is synchronised here in
 * any case: the inputs come to host memory, runtime/datadep.c's definition
 * runs there (the one the CPU backend runs), and the outputs go back, sized
 * as written. A sync per such node (--profile shows its time); a CUDA graph
 * cannot hold one (the executor refuses --cuda-graph for a dynamic graph). */
#include <stdlib.h>
#include <string.h>

#include "cu.cuh"

extern "C" {
#include "../runtime/datadep.h"
}

static size_t bytes_of(const ft_view *v) { return (size_t)ft_numel(&v->shape) * ft_dtype_size(v->dtype); }

ft_status cu_datadep(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    cudaStream_t s = k->be->stream;
    ft_view hin[8], hout[8];
    if (n->n_in > 8 || n->n_out > 8)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "internal error: more than 8 inputs or outputs");
    ft_status st = FT_OK;
    int ni = 0, no = 0;
    for (; ni < n->n_in && !st; ni++) {
        hin[ni] = in[ni];
        if (!in[ni].data)
            continue;
        size_t nb = bytes_of(&in[ni]);
        if (!(hin[ni].data = ft_malloc(nb ? nb : 1)))
            st = ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory copying input %d to the host (%zu bytes)", ni, nb);
        else if (nb && cudaMemcpyAsync(hin[ni].data, in[ni].data, nb, cudaMemcpyDeviceToHost, s) != cudaSuccess)
            st = ft_node_err(k->err, FT_ERUNTIME, k->g, n, "copying input %d to the host failed", ni);
    }
    for (; no < n->n_out && !st; no++) {
        hout[no] = out[no];
        size_t nb = bytes_of(&out[no]);
        if (!(hout[no].data = ft_malloc(nb ? nb : 1)))
            st = ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for output %d on the host (%zu bytes)", no, nb);
    }
    if (!st && cudaStreamSynchronize(s) != cudaSuccess)
        st = ft_node_err(k->err, FT_ERUNTIME, k->g, n, "waiting for the inputs failed: %s",
                         cudaGetErrorString(cudaGetLastError()));
    if (!st)
        st = ft_dd_run(k, n, hin, hout);
    for (int o = 0; o < n->n_out && !st; o++) {
        out[o].shape = hout[o].shape;
        size_t nb = bytes_of(&out[o]);
        if (nb && cudaMemcpyAsync(out[o].data, hout[o].data, nb, cudaMemcpyHostToDevice, s) != cudaSuccess)
            st = ft_node_err(k->err, FT_ERUNTIME, k->g, n, "copying output %d to the device failed", o);
    }
    /* the host copies are freed below: the uploads must be done first */
    if (cudaStreamSynchronize(s) != cudaSuccess && !st)
        st = ft_node_err(k->err, FT_ERUNTIME, k->g, n, "copying the outputs failed: %s",
                         cudaGetErrorString(cudaGetLastError()));
    for (int i = 0; i < ni; i++)
        if (in[i].data)
            free(hin[i].data);
    for (int o = 0; o < no; o++)
        free(hout[o].data);
    return st;
}
