// The strided gather (src/runtime/strided_gather.hpp): one work-item per output element, in a
// grid-stride loop. Output index o is split into coordinates from the last axis (o mod shape,
// then o / shape; the outermost coordinate is what remains, no division) and the input offset
// is the sum of coordinate × stride; consecutive work-items write consecutive outputs. Items are
// copied as unsigned integers of their width (GATHER_ITEM: uchar, ushort, uint or ulong), so one
// program per width serves every dtype.
#ifndef GATHER_ITEM
#define GATHER_ITEM uint
#endif
#define GATHER_MAX_DIMS 16

// Laid out as the host's GatherArgs (opencl_gather.cpp): longs only, so no padding differs.
typedef struct {
  long ndim;
  long shape[GATHER_MAX_DIMS];
  long strides[GATHER_MAX_DIMS];
} gather_layout;

__kernel void strided_gather(__global const GATHER_ITEM* restrict src, __global GATHER_ITEM* restrict dst,
                     gather_layout g, long n) {
  const long step = (long)get_global_size(0);
  for (long o = (long)get_global_id(0); o < n; o += step) {
    long rest = o, offset = 0;
    for (int d = (int)g.ndim - 1; d > 0; --d) {
      offset += (rest % g.shape[d]) * g.strides[d];
      rest /= g.shape[d];
    }
    dst[o] = src[offset + rest * g.strides[0]];
  }
}
