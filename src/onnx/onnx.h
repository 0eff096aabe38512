/* ONNX models (ModelProto) and ONNX tensor files (TensorProto, ".pb"), read
 * with protobuf-c and the schema Debian's libonnx-dev installs
 * (/usr/include/onnx/onnx.proto, compiled into build/gen/onnx.pb-c.h).
 *
 *   ft_graph *g;                         // usually through ft_graph_load (load.c)
 *   if (ft_onnx_load("m.onnx", buf, len, &opts, &g, &err)) ... err.msg
 *
 *   ft_npy a = {0};                      // a tensor file: dtype, shape, data
 *   if (ft_pb_parse("input_0.pb", buf, len, &a, &err)) ...; ft_npy_clear(&a);
 *   ft_pb_write(f, "out.pb", "y", FT_F32, &shape, data, &err);   // f: open for writing
 *
 * Ownership: ft_onnx_load returns a graph the caller frees with ft_graph_free;
 * ft_pb_parse fills an ft_npy the caller clears. The caller keeps buf, except
 * with ft_onnx_load_owned, which frees it (as soon as the model is decoded,
 * so that the file's bytes and the decoded weights are not held together).
 */
#ifndef FT_ONNX_H
#define FT_ONNX_H

#include <stdio.h>

#include "../graph/graph.h"
#include "../io/npy.h"

/* 1 when buf starts like an ONNX model (a ModelProto's first field tag). */
int ft_onnx_sniff(const unsigned char *buf, size_t n);
/* Read an ONNX model held in buf (path names it in messages and locates
 * external data files): checks, folding and import of every node. */
ft_status ft_onnx_load(const char *path, const unsigned char *buf, size_t len, const ft_load_opts *opts,
                       ft_graph **out, ft_error *err);
/* ft_onnx_load of a file: mapped read-only where it can be (else read), its
 * initializers decoded one at a time so that the file's bytes and the
 * decoded weights are not held together (onnx_split.c). */
ft_status ft_onnx_load_file(const char *path, const ft_load_opts *opts, ft_graph **out, ft_error *err);
/* ft_onnx_load of a buffer it takes: buf (ft_malloc'd) is freed in every case. */
ft_status ft_onnx_load_owned(const char *path, unsigned char *buf, size_t len, const ft_load_opts *opts,
                             ft_graph **out, ft_error *err);

/* A TensorProto file. Values in raw_data or the typed fields; external data is
 * refused here (a lone tensor file has no folder rule). */
ft_status ft_pb_parse(const char *path, const unsigned char *buf, size_t n, ft_npy *out, ft_error *err);
/* A SequenceProto (optional 0) or OptionalProto (optional 1) file, as ONNX's
 * test folders hold sequence and optional values (onnx_seqpb.c): its tensors
 * into *out (ft_malloc'd, each cleared by the caller) and their number into
 * *count; -1 for an empty optional. An optional sequence gives the
 * sequence's tensors. Sequences of other things are refused (FT_EGRAPH). */
ft_status ft_pb_parse_values(const char *path, const unsigned char *buf, size_t n, int optional, ft_npy **out, int *count,
                             ft_error *err);
/* Write a TensorProto named `name` (raw_data, little-endian) to a stream. */
ft_status ft_pb_write(FILE *f, const char *path, const char *name, ft_dtype dt, const ft_shape *s, const void *data,
                      ft_error *err);

/* ---- shared by the onnx_*.c files ---- */
struct Onnx__TensorProto;
struct ProtobufCAllocator;
/* malloc/free for protobuf-c that remember a failed allocation, so that an
 * unpack that returns NULL can be told apart: out of memory or malformed.
 * ft_pb_alloc_failed(1) clears the mark (and returns it). */
extern struct ProtobufCAllocator ft_pb_allocator;
int ft_pb_alloc_failed(int reset);
/* ftrun dtype of an ONNX TensorProto data_type; -1 when ftrun has none. */
int ft_onnx_dtype(int32_t onnx_type, ft_dtype *dt);
const char *ft_onnx_type_name(int32_t onnx_type);
int32_t ft_onnx_type_of(ft_dtype dt);
/* Decode a TensorProto into out (owned copy, C order). what names it in
 * messages ("initializer 'w'"). dir: the model's folder, for external data
 * (NULL refuses external data); allow_external lifts the folder rule. */
ft_status ft_onnx_tensor_decode(const struct Onnx__TensorProto *tp, const char *file, const char *what, const char *dir,
                                int allow_external, ft_npy *out, ft_error *err);
/* The same, but where the value is tp's raw_data as it stands (a dtype of a
 * byte or more other than bool), out takes over tp's buffer instead of
 * copying it: tp then holds no raw_data (*taken set to 1; else 0). tp must
 * come from ft_pb_allocator (its buffers are malloc's). Keeps a large model's
 * weights from being held twice while it loads. */
ft_status ft_onnx_tensor_take(struct Onnx__TensorProto *tp, const char *file, const char *what, const char *dir,
                              int allow_external, ft_npy *out, int *taken, ft_error *err);

#endif
