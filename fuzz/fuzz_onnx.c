/* libFuzzer harness: an ONNX model (ModelProto bytes) through ft_onnx_load
 * (checks, load-time folding, every op's mapper), then validation, cost and
 * planning as `ftrun info` does. The model is named ftrun-fuzz-PID/model.onnx,
 * so external data may name the scratch files w.bin and w.npy beside it.
 *
 * The custom mutator (onnx_mutator.h) edits the model as a message. */
#include "fuzz_common.h"
#include "fuzz_graph_common.h"
#include "onnx/onnx.h"
#include "onnx_mutator.h"

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static char fz_path[96];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz_setup();
    snprintf(fz_path, sizeof fz_path, "%s/model.onnx", fz_dir);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ft_load_opts o = {.seed_override = -1};
    ft_graph *g = NULL;
    ft_error err = {0};
    ft_status st = ft_onnx_load(fz_path, data, size, &o, &g, &err);
    if (st != FT_OK) {
        if (g || !err.msg[0])
            abort(); /* a failure returns no graph and says why */
        return 0;
    }
    fz_check_graph(g); /* takes g */
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return om_mutate(data, size, max_size, seed);
}
