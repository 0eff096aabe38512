/* Encoded images (ONNX ImageDecoder): the readers of image_decoder, on
 * Debian's libraries: JPEG (libjpeg-turbo), PNG (libpng), WebP (libwebp),
 * TIFF (libtiff), JPEG 2000 (OpenJPEG, .jp2 or a bare codestream), BMP and
 * binary PNM (P5, P6; stb_image). The format is told by the first bytes.
 * The output is 8-bit [H, W, C]: RGB or BGR (C = 3; an alpha channel is
 * dropped, a grey image repeated) or Grayscale (C = 1, the luma of the RGB
 * pixels: (19595 R + 38470 G + 7471 B + 2^15) >> 16, Pillow's "L").
 *
 * They sit with the graph because the output's shape is the image's size:
 * inference (infer_dynamic.c) reads the header, at load for a constant and
 * at every run otherwise; the kernel (runtime/datadep.c) decodes.
 *
 *   int64_t h, w;
 *   char why[160];
 *   if (ft_image_probe(bytes, n, &h, &w, why, sizeof why)) ... // why: what is wrong with the bytes
 *   ft_image_decode(bytes, n, FT_PIX_RGB, out, h, w, why, sizeof why); // out: h * w * 3 bytes
 *
 * Nothing is kept between calls; every library error comes back in why. */
#ifndef FT_IMAGE_CODEC_H
#define FT_IMAGE_CODEC_H

#include <stddef.h>
#include <stdint.h>

enum { FT_PIX_RGB = 0, FT_PIX_BGR = 1, FT_PIX_GRAY = 2 };

/* The largest image read: 2^28 pixels, at most 2^20 a side. */
#define FT_IMAGE_MAX_PIXELS ((int64_t)1 << 28)

/* The format's name ("JPEG", ...), or NULL when the first bytes are none of them. */
const char *ft_image_format(const uint8_t *p, size_t n);
/* The image's height and width; -1 with why filled when the bytes are not
 * an image ftrun reads, -2 when an allocation failed (ftrun's or an image
 * library's: its message says "out of memory" or "insufficient memory"). */
int ft_image_probe(const uint8_t *p, size_t n, int64_t *h, int64_t *w, char *why, size_t why_n);
/* The pixels into out (h * w * (pix == FT_PIX_GRAY ? 1 : 3) bytes); h and w
 * are ft_image_probe's. -1 with why filled on a decoding error, -2 when an
 * allocation failed (as ft_image_probe). */
int ft_image_decode(const uint8_t *p, size_t n, int pix, uint8_t *out, int64_t h, int64_t w, char *why, size_t why_n);

#endif
