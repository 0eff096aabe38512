/* libFuzzer harness: an ONNX tensor file (TensorProto bytes, the .pb inputs
 * and goldens of ONNX test folders) through ft_pb_parse, and the same bytes
 * as a SequenceProto and an OptionalProto through ft_pb_parse_values. */
#include "fuzz_common.h"
#include "onnx/onnx.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) { return 0; }

/* The bytes as a SequenceProto (optional 0) or OptionalProto (1). */
static void values(const uint8_t *data, size_t size, int optional)
{
    ft_npy *v = NULL;
    int n = 0;
    ft_error err = {0};
    if (ft_pb_parse_values("fuzz.pb", data, size, optional, &v, &n, &err) != FT_OK) {
        if (v || n || !err.msg[0])
            abort();
        return;
    }
    if (n < -1 || (n == -1 && !optional))
        abort();
    for (int i = 0; i < n; i++) {
        if (v[i].nbytes != ft_numel(&v[i].shape) * ft_dtype_size(v[i].dtype))
            abort();
        if (v[i].nbytes)
            ((volatile unsigned char *)v[i].data)[v[i].nbytes - 1] ^= 0;
        ft_npy_clear(&v[i]);
    }
    free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    values(data, size, 0);
    values(data, size, 1);
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
