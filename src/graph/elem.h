/* Element i of a buffer of any dtype read or written as a double or an
 * int64: the slow generic paths of value loading, comparison and rare
 * kernels (the per-dtype loads are dtype_load.h's; the conversions of the
 * low-precision dtypes lowp.h's). Conversions into an integer dtype
 * saturate, NaN becoming INT64_MIN; stores into a low-precision dtype round
 * as Cast's defaults do. The caller owns the buffer.
 *
 *   double x = ft_load_f64(t.data, t.dtype, i);
 *   ft_store_f64(out.data, out.dtype, i, x * 2);
 */
#ifndef FT_ELEM_H
#define FT_ELEM_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

double ft_load_f64(const void *p, ft_dtype dt, size_t i);
int64_t ft_load_i64(const void *p, ft_dtype dt, size_t i);
void ft_store_f64(void *p, ft_dtype dt, size_t i, double v);
void ft_store_i64(void *p, ft_dtype dt, size_t i, int64_t v);

#endif
