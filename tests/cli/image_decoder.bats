#!/usr/bin/env bats
# image_decoder (ONNX ImageDecoder): JPEG, PNG, WebP, TIFF, JPEG 2000, BMP and
# PNM files written by Pillow and decoded by ftrun, against Pillow's own
# decoding of the same bytes (RGB, BGR, Grayscale); the output's shape from
# a constant image at load and from an -i image at run time; malformed and
# truncated bytes refused with exit 3 naming the node and op, nothing written;
# on a CUDA device only with --fallback cpu.

bats_require_minimum_version 1.5.0
load helpers

setup_file() { fake_device_build; }

# $T/img_NAME.npy (the file's bytes as u8) and $T/want_NAME_{RGB,BGR,Grayscale}.npy
# (Pillow's decoding) for each picture
make_images() {
    py '
import io
from PIL import Image
t = sys.argv[1]
rng = np.random.default_rng(5)
yy, xx = np.mgrid[0:37, 0:53]
px = np.stack([xx * 4, yy * 6, (xx + yy) * 2], -1).astype(np.uint8)  # smooth, 53 x 37
px[5:9, 10:30] = rng.integers(0, 256, (4, 20, 3), dtype=np.uint8)     # and some noise
im = Image.fromarray(px)
saves = {"jpeg": ("JPEG", {"quality": 90}), "jpeg420": ("JPEG", {"quality": 75, "subsampling": 2}),
         "png": ("PNG", {}), "webp": ("WEBP", {"lossless": True}), "webp_lossy": ("WEBP", {"quality": 80}),
         "tiff": ("TIFF", {}), "tiff_lzw": ("TIFF", {"compression": "tiff_lzw"}), "jp2": ("JPEG2000", {}),
         "j2k": ("JPEG2000", {"irreversible": False, "no_jp2": True}), "bmp": ("BMP", {}), "ppm": ("PPM", {})}
files = {}
for name, (fmt, kw) in saves.items():
    b = io.BytesIO()
    im.save(b, fmt, **kw)
    files[name] = b.getvalue()
for name, src in (("pgm", "L"), ("png_gray", "L"), ("png_rgba", "RGBA"), ("png_palette", "P"), ("jpeg_gray", "L")):
    b = io.BytesIO()
    im.convert(src).save(b, "PPM" if name == "pgm" else "JPEG" if name == "jpeg_gray" else "PNG")
    files[name] = b.getvalue()
for name, data in files.items():
    np.save("%s/img_%s.npy" % (t, name), np.frombuffer(data, np.uint8))
    rgb = np.array(Image.open(io.BytesIO(data)).convert("RGB"))
    gray = np.array(Image.open(io.BytesIO(data)).convert("RGB").convert("L"))[:, :, None]
    np.save("%s/want_%s_RGB.npy" % (t, name), rgb)
    np.save("%s/want_%s_BGR.npy" % (t, name), rgb[:, :, ::-1])
    np.save("%s/want_%s_Grayscale.npy" % (t, name), gray)
    assert rgb.shape == (37, 53, 3), (name, rgb.shape)' "$T"
}

# $T/$1.json: image_decoder of input img (["n"] u8, n bound by the -i file), pixel_format $2
decoder_graph() {
    py '
t, name, fmt = sys.argv[1:]
g = {"ftrun": 1, "name": "dec", "tensors": {"img": {"dtype": "u8", "shape": ["n"]}}, "inputs": ["img"], "outputs": ["pix"],
     "nodes": [{"name": "decode", "op": "image_decoder", "inputs": ["img"], "outputs": ["pix"], "attrs": {"pixel_format": fmt}}]}
json.dump(g, open("%s/%s.json" % (t, name), "w"))' "$T" "$1" "$2"
}

@test "image_decoder: JPEG, PNG, WebP, TIFF, JPEG 2000, BMP and PNM give Pillow's pixels in RGB, BGR and Grayscale" {
    make_images
    for img in jpeg jpeg420 jpeg_gray png png_gray png_rgba png_palette webp webp_lossy tiff tiff_lzw jp2 j2k bmp ppm pgm; do
        for fmt in RGB BGR Grayscale; do
            decoder_graph g "$fmt"
            run --separate-stderr "$FTRUN" run "$T/g.json" -i img="$T/img_$img.npy" -o "$T/o_${img}_$fmt" -q
            [ "$status" -eq 0 ] || { echo "$img $fmt: $stderr"; false; }
        done
    done
    py '
t = sys.argv[1]
bad = []
for img in "jpeg jpeg420 jpeg_gray png png_gray png_rgba png_palette webp webp_lossy tiff tiff_lzw jp2 j2k bmp ppm pgm".split():
    for fmt in ("RGB", "BGR", "Grayscale"):
        got, want = np.load("%s/o_%s_%s/pix.npy" % (t, img, fmt)), np.load("%s/want_%s_%s.npy" % (t, img, fmt))
        if got.dtype != np.uint8 or got.shape != want.shape or not (got == want).all():
            bad.append((img, fmt, got.shape, want.shape, int(np.abs(got.astype(int) - want).max()) if got.shape == want.shape else -1))
assert not bad, bad' "$T"
}

@test "image_decoder: a constant image's shape is known at load (info), an -i image's at run time" {
    make_images
    py '
t = sys.argv[1]
img = np.load(t + "/img_png.npy")
g = {"ftrun": 1, "name": "c", "tensors": {"img": {"dtype": "u8", "shape": [int(img.shape[0])], "file": "img_png.npy"}},
     "inputs": [], "outputs": ["s"],
     "nodes": [{"name": "decode", "op": "image_decoder", "inputs": ["img"], "outputs": ["pix"]},
               {"name": "wide", "op": "cast", "inputs": ["pix"], "outputs": ["f"], "attrs": {"to": "f32"}},
               {"name": "sum", "op": "reduce_sum", "inputs": ["f"], "outputs": ["s"], "attrs": {"axes": [0, 1], "keepdims": 0}}]}
json.dump(g, open(t + "/c.json", "w"))' "$T"
    run --separate-stderr "$FTRUN" info "$T/c.json"
    [ "$status" -eq 0 ]
    [[ "$output" == *"[37,53,3]"* ]]
    run --separate-stderr "$FTRUN" run "$T/c.json" -o "$T/oc" -q
    [ "$status" -eq 0 ]
    # the same image given with -i: the shape comes at run time; then another of another size, same graph file
    decoder_graph r RGB
    run --separate-stderr "$FTRUN" run "$T/r.json" -i img="$T/img_png.npy" -o "$T/or" -q
    [ "$status" -eq 0 ]
    py '
from PIL import Image
Image.fromarray(np.full((3, 4), 77, np.uint8)).save(sys.argv[1] + "/small.png")
np.save(sys.argv[1] + "/small.npy", np.fromfile(sys.argv[1] + "/small.png", np.uint8))' "$T"
    run --separate-stderr "$FTRUN" run "$T/r.json" -i img="$T/small.npy" -o "$T/os" -q
    [ "$status" -eq 0 ]
    py '
t = sys.argv[1]
want = np.load(t + "/want_png_RGB.npy").astype(np.float64).sum(axis=(0, 1))
assert np.allclose(np.load(t + "/oc/s.npy"), want), (np.load(t + "/oc/s.npy"), want)
assert np.load(t + "/or/pix.npy").shape == (37, 53, 3)
s = np.load(t + "/os/pix.npy")
assert s.shape == (3, 4, 3) and (s == 77).all(), s' "$T"
}

@test "image_decoder: malformed, truncated and unknown bytes exit 3 naming the node and op; nothing written" {
    make_images
    py '
t = sys.argv[1]
for name in ("jpeg", "png", "webp", "tiff", "jp2", "bmp", "ppm"):
    b = np.load("%s/img_%s.npy" % (t, name))
    np.save("%s/cut_%s.npy" % (t, name), b[:len(b) * 2 // 3])           # truncated
    h = b.copy(); h[len(b) // 2:] ^= 0x5a                                 # the second half corrupt
    np.save("%s/bad_%s.npy" % (t, name), h)
np.save(t + "/cut_head.npy", np.load(t + "/img_png.npy")[:20])          # inside the header
np.save(t + "/noise.npy", np.random.default_rng(1).integers(0, 256, 300, dtype=np.uint8))
np.save(t + "/p3.npy", np.frombuffer(b"P3\n2 1\n255\n0 0 0 255 255 255\n", np.uint8))
np.save(t + "/empty.npy", np.zeros(0, np.uint8))' "$T"
    # (bad_jp2 is left out: OpenJPEG, as Pillow, decodes corrupt entropy-coded data to other pixels without a
    # word, and the JPEG and TIFF files here hold data whose corruption their decoders cannot all see either)
    for f in cut_jpeg cut_png cut_webp cut_tiff cut_jp2 cut_bmp cut_ppm bad_png bad_webp cut_head noise p3 empty; do
        decoder_graph g RGB
        run --separate-stderr "$FTRUN" run "$T/g.json" -i img="$T/$f.npy" -o "$T/o_$f"
        [ "$status" -eq 3 ] || { echo "$f: status $status: $stderr"; false; }
        [[ "$stderr" == *"node 'decode' (image_decoder)"* ]] || { echo "$f: $stderr"; false; }
        [ ! -e "$T/o_$f/pix.npy" ]
    done
    run --separate-stderr "$FTRUN" run "$T/g.json" -i img="$T/noise.npy" -o "$T/o"
    [[ "$stderr" == *"begin as no image format image_decoder reads"* ]]
    run --separate-stderr "$FTRUN" run "$T/g.json" -i img="$T/p3.npy" -o "$T/o"
    [[ "$stderr" == *"PNM P3"* ]]
    run --separate-stderr "$FTRUN" run "$T/g.json" -i img="$T/cut_png.npy" -o "$T/o"
    [[ "$stderr" == *"PNG:"* ]]
}

@test "image_decoder: a pixel_format other than RGB, BGR, Grayscale exits 3; ONNX ImageDecoder maps to it" {
    make_images
    decoder_graph g RGBA
    run --separate-stderr "$FTRUN" run "$T/g.json" -i img="$T/img_png.npy" -o "$T/o"
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"pixel_format"*"RGBA"* ]]
    py '
import onnx
from onnx import helper as h, TensorProto as TP
n = int(np.load(sys.argv[1] + "/img_jpeg.npy").shape[0])
g = h.make_graph([h.make_node("ImageDecoder", ["x"], ["y"], pixel_format="BGR")], "d",
                 [h.make_tensor_value_info("x", TP.UINT8, [n])], [h.make_tensor_value_info("y", TP.UINT8, None)])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 20)]), sys.argv[1] + "/d.onnx")' "$T"
    run --separate-stderr "$FTRUN" run "$T/d.onnx" -i x="$T/img_jpeg.npy" -o "$T/od" -q
    [ "$status" -eq 0 ]
    py 'assert (np.load(sys.argv[1] + "/od/y.npy") == np.load(sys.argv[1] + "/want_jpeg_BGR.npy")).all()' "$T"
}

@test "image_decoder on a CUDA device (the stand-in, lacking it as the real backend does): exit 4, or --fallback cpu" {
    make_images
    decoder_graph g RGB
    FAKE_MISSING_OP=image_decoder fake run --separate-stderr "$FTRUN" run "$T/g.json" -i img="$T/img_jpeg.npy" -d cuda -o "$T/o"
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"the cuda backend does not implement op 'image_decoder' (--fallback cpu runs it on the cpu)"* ]]
    FAKE_MISSING_OP=image_decoder fake run --separate-stderr "$FTRUN" run "$T/g.json" -i img="$T/img_jpeg.npy" -d cuda \
        --fallback cpu -o "$T/f"
    [ "$status" -eq 0 ]
    py 'assert (np.load(sys.argv[1] + "/f/pix.npy") == np.load(sys.argv[1] + "/want_jpeg_RGB.npy")).all()' "$T"
}
