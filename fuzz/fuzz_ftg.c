/* libFuzzer harness: a binary graph (.ftg) through ft_ftg_load (written to a
 * scratch file: the reader maps a file), then validation, cost and planning. */
#include "fuzz_common.h"
#include "fuzz_graph_common.h"
#include "ftg_mutator.h"
#include "io/ftg.h"

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static char fz_path[96];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz_setup();
    snprintf(fz_path, sizeof fz_path, "%s/graph.ftg", fz_dir);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fz_write("graph.ftg", data, size))
        abort();
    ft_load_opts o = {.seed_override = -1};
    ft_graph *g = NULL;
    ft_error err = {0};
    ft_status st = ft_ftg_load(fz_path, &o, &g, &err);
    if (st != FT_OK) {
        if (g || !err.msg[0])
            abort();
        return 0;
    }
    fz_check_graph(g); /* takes g */
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return ftg_mutate(data, size, max_size, seed);
}
