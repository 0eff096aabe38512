/* The names of an ONNX model's graph inputs that have no initializer, in
 * order, read without importing the model: the positions of an ONNX test's
 * input_K.pb files, so `ftrun test` can give each input its value before the
 * import (which reads parameter inputs such as Reshape's shape at load time).
 *
 *   char **names; int *kinds, n;
 *   if (ft_onnx_input_names("model.onnx", &names, &kinds, &n, &err)) ...  // err.msg
 *   if (n < 0) ...                       // not an ONNX model (names NULL)
 *   ft_free_strs(names, n); free(kinds);
 *
 * kinds[k]: 0 a tensor, 1 a sequence, 2 an optional value (its file is a
 * TensorProto, SequenceProto or OptionalProto).
 * Ownership: the caller frees the list with ft_free_strs (common.h), kinds with free.
 */
#ifndef FT_ONNX_INPUTS_H
#define FT_ONNX_INPUTS_H

#include "../common.h"

ft_status ft_onnx_input_names(const char *path, char ***names, int **kinds, int *n, ft_error *err);

#endif
