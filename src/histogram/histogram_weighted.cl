// Weighted histogram kernels (OpenCL 1.2), built after histogram_rules.cl and histogram_add_f64.cl:
// each adds the float64 weight (W, float or double) of every value to the sum of the value's slot.
//  - weighted_interleaved: grid-stride (coalesced) reads, one global add per value;
//  - weighted_fast: grid-stride reads, four values and weights in flight per work-item; each
//    work-item sums the weights of a run of equal slots in a register and adds the run once
//    (skewed and all-equal data cost one add per run) to the sums of histogram_add_f64.cl.
#ifndef W
#define W float
#endif

__kernel void weighted_interleaved(__global const T* in, long n, RULE_PARAMS,
                                   __global const W* w, __global ulong* sums) {
  long stride = get_global_size(0);
  for (long i = get_global_id(0); i < n; i += stride)
    add_weight(sums + SLOT(in[i]), (double)w[i]);
}

__kernel void weighted_fast(__global const T* in, long n, RULE_PARAMS, __global const W* w,
                            uint slots, __local ulong* part, __global ulong* sums) {
  zero_sums(part, slots);
  // Four values and weights in flight per work-item, then the tail one at a time.
  const long stride = get_global_size(0);
  uint run_slot = NO_RUN;
  double run = 0;
  long i = get_global_id(0);
  for (; i + 3 * stride < n; i += 4 * stride) {
    T x0 = in[i], x1 = in[i + stride], x2 = in[i + 2 * stride], x3 = in[i + 3 * stride];
    W w0 = w[i], w1 = w[i + stride], w2 = w[i + 2 * stride], w3 = w[i + 3 * stride];
    run_add(SLOT(x0), (double)w0, &run_slot, &run, part, sums);
    run_add(SLOT(x1), (double)w1, &run_slot, &run, part, sums);
    run_add(SLOT(x2), (double)w2, &run_slot, &run, part, sums);
    run_add(SLOT(x3), (double)w3, &run_slot, &run, part, sums);
  }
  for (; i < n; i += stride)
    run_add(SLOT(in[i]), (double)w[i], &run_slot, &run, part, sums);
  finish_sums(run_slot, run, part, slots, sums);
}
