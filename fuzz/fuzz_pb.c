/* libFuzzer harness: an ONNX tensor file (TensorProto bytes, the .pb inputs
 * and goldens of ONNX test folders) through ft_pb_parse. */
#include "fuzz_common.h"
#include "onnx/onnx.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) { return 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ft_npy a;
    memset(&a, 0, sizeof a);
    ft_error err = {0};
    if (ft_pb_parse("fuzz.pb", data, size, &a, &err) != FT_OK) {
        if (a.data || !err.msg[0])
            abort();
        return 0;
    }
    if (a.nbytes != ft_numel(&a.shape) * ft_dtype_size(a.dtype))
        abort();
    if (a.nbytes) /* touch the last byte: ASan checks the buffer really is that long */
        ((volatile unsigned char *)a.data)[a.nbytes - 1] ^= 0;
    ft_npy_clear(&a);
    return 0;
}
