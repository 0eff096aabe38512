/* libFuzzer harness: encoded image bytes through image_decoder's readers
 * (src/graph/image_codec.c): the header read, then the pixels decoded in
 * each pixel format. */
#include "fuzz_common.h"
#include "graph/image_codec.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) { return 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int64_t h = 0, w = 0;
    char why[256];
    if (ft_image_probe(data, size, &h, &w, why, sizeof why)) {
        if (!why[0])
            abort(); /* a failure says why */
        return 0;
    }
    if (h < 1 || w < 1 || h * w > FT_IMAGE_MAX_PIXELS)
        abort();
    if (h * w > ((int64_t)1 << 22)) /* a few MiB of pixels: larger ones only cost time */
        return 0;
    for (int pix = FT_PIX_RGB; pix <= FT_PIX_GRAY; pix++) {
        size_t nb = (size_t)(h * w) * (pix == FT_PIX_GRAY ? 1 : 3);
        uint8_t *out = malloc(nb);
        if (!out)
            return 0;
        if (ft_image_decode(data, size, pix, out, h, w, why, sizeof why)) {
            if (!why[0])
                abort();
        } else {
            unsigned s = 0; /* every byte was written: MSan-free, but ASan checks the bounds */
            for (size_t i = 0; i < nb; i++)
                s += out[i];
            ((volatile unsigned *)&s)[0] ^= 0;
        }
        free(out);
    }
    return 0;
}
