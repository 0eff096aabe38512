/* libFuzzer harness: .npz bytes through ft_npz_open_mem, then every member
 * decoded (inflate, CRC-32, .npy parse) and looked up by name. */
#include "fuzz_common.h"
#include "io/npz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) { return 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *buf = malloc(size ? size : 1); /* the archive takes it over */
    if (!buf)
        return 0;
    if (size)
        memcpy(buf, data, size);
    ft_npz z;
    ft_error err = {0};
    if (ft_npz_open_mem("fuzz.npz", buf, size, &z, &err) != FT_OK) {
        if (!err.msg[0])
            abort();
        return 0;
    }
    char names[1024];
    ft_npz_names(&z, names, sizeof names);
    for (int i = 0; i < z.n; i++) {
        if (ft_npz_find(&z, z.e[i].name) < 0)
            abort();
        ft_npy a;
        err.msg[0] = 0;
        if (ft_npz_read(&z, i, &a, &err) == FT_OK)
            ft_npy_clear(&a);
        else if (!err.msg[0])
            abort();
    }
    ft_npz_find(&z, "x");
    ft_npz_close(&z);
    return 0;
}
