/* libFuzzer harness: a JSON graph document through ft_graph_load_json, then
 * validation (every op's inference), cost and memory planning. */
#include "fuzz_common.h"
#include "fuzz_graph_common.h"
#include "json_mutator.h"

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static char fz_path[96];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz_setup();
    snprintf(fz_path, sizeof fz_path, "%s/graph.json", fz_dir);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* as ft_read_file gives it: NUL-terminated */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    ft_load_opts o = {.seed_override = -1};
    ft_graph *g = NULL;
    ft_error err = {0};
    ft_status st = ft_graph_load_json(fz_path, text, size, &o, &g, &err);
    free(text);
    if (st != FT_OK) {
        if (g || !err.msg[0])
            abort();
        return 0;
    }
    fz_check_graph(g); /* takes g */
    return 0;
}

/* Three mutations in four edit the parsed document; the rest are libFuzzer's
 * byte-level ones (which also use json.dict). */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    if (seed % 4 != 0 && size > 0) {
        size_t n = jm_mutate_text((const char *)data, size, (char *)data, max_size, seed);
        if (n)
            return n;
    }
    return LLVMFuzzerMutate(data, size, max_size);
}
