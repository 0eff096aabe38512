/* libFuzzer harness: .npy bytes through ft_npy_parse (and the f32 -> bf16
 * conversion a bf16 tensor's file goes through). */
#include "fuzz_common.h"
#include "io/npy.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) { return 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ft_npy a;
    ft_error err = {0};
    if (ft_npy_parse("fuzz.npy", data, size, &a, &err) != FT_OK) {
        if (a.data || !err.msg[0])
            abort();
        return 0;
    }
    if (a.nbytes != ft_numel(&a.shape) * ft_dtype_size(a.dtype))
        abort();
    if (a.nbytes) /* touch every byte: ASan checks the buffer really is that long */
        ((volatile unsigned char *)a.data)[a.nbytes - 1] ^= 0;
    if (a.dtype == FT_F32)
        ft_npy_to_dtype(&a, FT_BF16);
    ft_npy_clear(&a);
    return 0;
}
