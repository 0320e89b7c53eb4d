// Weighted histogram kernels (OpenCL 1.2), built after histogram_rules.cl and histogram_add_f64.cl:
// each adds the float64 weight (W, float or double) of every value to the sum of the value's slot.
//  - weighted_interleaved: grid-stride (coalesced) reads, one global add per value;
//  - weighted_fast: grid-stride reads, four values and weights in flight per work-item; each
//    work-item sums the weights of a run of equal slots
//    in a register and adds the run once (skewed and all-equal data cost one add per run), into
//    float64 sums per slot in local memory lane-striped over COLUMNS copies (slot s of lane l at
//    s·COLUMNS + l mod COLUMNS) with LOCAL_SUMS, else into the global sums. A group adds its
//    sums (a slot's copies together) to the global ones at the end, one add per slot that took
//    a weight.
#ifndef W
#define W float
#endif
#ifndef LOCAL_SUMS
#define LOCAL_SUMS 1
#endif

__kernel void weighted_interleaved(__global const T* in, long n, RULE_PARAMS,
                                   __global const W* w, __global ulong* sums) {
  long stride = get_global_size(0);
  for (long i = get_global_id(0); i < n; i += stride)
    add_weight(sums + SLOT(in[i]), (double)w[i]);
}

#if LOCAL_SUMS
#define ADD_RUN(s, v) add_weight_local(part + (s) * COLUMNS + column, (v))
#else
#define ADD_RUN(s, v) add_weight(sums + (s), (v))
#endif

// Adds weight v of slot s to the work-item's run, adding the run first when the slot changes.
void run_add(uint s, double v, uint* run_slot, double* run, __local ulong* part, uint column,
             __global ulong* sums) {
  if (s == *run_slot) {
    *run += v;
    return;
  }
  if (*run_slot != NO_INDEX) ADD_RUN(*run_slot, *run);
  *run_slot = s;
  *run = v;
}

__kernel void weighted_fast(__global const T* in, long n, RULE_PARAMS, __global const W* w,
                            uint slots, __local ulong* part, __global ulong* sums) {
#if LOCAL_SUMS
  for (uint i = get_local_id(0); i < slots * COLUMNS; i += get_local_size(0))
    part[i] = as_ulong(0.0);
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  const uint column = get_local_id(0) % 32 % COLUMNS;
  // Four values and weights in flight per work-item, then the tail one at a time.
  const long stride = get_global_size(0);
  uint run_slot = NO_INDEX;
  double run = 0;
  long i = get_global_id(0);
  for (; i + 3 * stride < n; i += 4 * stride) {
    T x0 = in[i], x1 = in[i + stride], x2 = in[i + 2 * stride], x3 = in[i + 3 * stride];
    W w0 = w[i], w1 = w[i + stride], w2 = w[i + 2 * stride], w3 = w[i + 3 * stride];
    run_add(SLOT(x0), (double)w0, &run_slot, &run, part, column, sums);
    run_add(SLOT(x1), (double)w1, &run_slot, &run, part, column, sums);
    run_add(SLOT(x2), (double)w2, &run_slot, &run, part, column, sums);
    run_add(SLOT(x3), (double)w3, &run_slot, &run, part, column, sums);
  }
  for (; i < n; i += stride)
    run_add(SLOT(in[i]), (double)w[i], &run_slot, &run, part, column, sums);
  if (run_slot != NO_INDEX) ADD_RUN(run_slot, run);
#if LOCAL_SUMS
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_id(0); s < slots; s += get_local_size(0)) {
    double sum = 0;
    for (uint c = 0; c < COLUMNS; ++c)
      sum += as_double(part[s * COLUMNS + c]);
    if (sum != 0) add_weight(sums + s, sum);
  }
#endif
}
