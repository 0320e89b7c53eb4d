// A local counter counted once (count_one) and taken once (take_one, its old value returned),
// given as LOCAL_ADDRESS(pointer): with NVIDIA_PTX by red.shared and atom.shared on its 32-bit
// local address, and NVIDIA's warp instructions (lane masks, shuffles, votes and reductions over
// the 32 work-items of a warp, all converged); elsewhere OpenCL C 1.2's atomics and no warp
// instructions. group_inclusive_sum scans over a whole group. Shared by histogram_bucketed.cl
// and bench/floor/histogram_opencl_floor.

#if NVIDIA_PTX
uint lane_id(void) {
  uint lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}
uint lanes_below(void) {
  uint mask;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
  return mask;
}
uint lanes_up_to(void) {
  uint mask;
  asm("mov.u32 %0, %%lanemask_le;" : "=r"(mask));
  return mask;
}
uint shfl_up(uint v, uint d) {
  uint r;
  asm volatile("shfl.sync.up.b32 %0, %1, %2, 0, 0xFFFFFFFF;" : "=r"(r) : "r"(v), "r"(d));
  return r;
}
uint shfl_xor(uint v, uint mask) {
  uint r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1F, 0xFFFFFFFF;" : "=r"(r) : "r"(v), "r"(mask));
  return r;
}
uint shfl_from(uint v, uint lane) {
  uint r;
  asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1F, 0xFFFFFFFF;" : "=r"(r) : "r"(v), "r"(lane));
  return r;
}
uint ballot(bool p) {
  uint r;
  asm volatile("{ .reg .pred q; setp.ne.u32 q, %1, 0; vote.sync.ballot.b32 %0, q, 0xFFFFFFFF; }"
               : "=r"(r)
               : "r"((uint)p));
  return r;
}
uint warp_or(uint v) {
  uint r;
  asm volatile("redux.sync.or.b32 %0, %1, 0xFFFFFFFF;" : "=r"(r) : "r"(v));
  return r;
}
uint warp_add(uint v) {
  uint r;
  asm volatile("redux.sync.add.u32 %0, %1, 0xFFFFFFFF;" : "=r"(r) : "r"(v));
  return r;
}
void warp_barrier(void) {
  asm volatile("bar.warp.sync 0xFFFFFFFF;" ::: "memory");
}
// Sum of v over the lanes up to and including this one.
uint warp_inclusive_sum(uint v, uint lane) {
  for (uint d = 1; d < 32; d *= 2) {
    const uint below = shfl_up(v, d);
    if (lane >= d) v += below;
  }
  return v;
}
// A local counter (its local address) counted once; taken (its old value returned).
void count_one(uint address) {
  asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(address) : "memory");
}
uint take_one(uint address) {
  uint old;
  asm volatile("atom.shared.add.u32 %0, [%1], 1;" : "=r"(old) : "r"(address) : "memory");
  return old;
}
#define LOCAL_ADDRESS(p) ((uint)(size_t)(p))
#else
void count_one(__local uint* counter) {
  atomic_inc(counter);
}
uint take_one(__local uint* counter) {
  return atomic_inc(counter);
}
#define LOCAL_ADDRESS(p) (p)
#endif

// The sum of v over the group's work-items up to and including this one; *total: over all of
// them. `scratch` holds a uint a work-item (with NVIDIA_PTX one a warp: warp scans, then one of
// the warps' sums); the group is whole warps, at most 1024 work-items. Every work-item of the
// group calls it; `scratch` may be written again after one more barrier.
uint group_inclusive_sum(uint v, __local uint* scratch, uint* total) {
  const uint lid = get_local_id(0), group = get_local_size(0);
#if NVIDIA_PTX
  const uint lane = lane_id(), warp = lid / 32;
  const uint inclusive = warp_inclusive_sum(v, lane);
  if (lane == 31) scratch[warp] = inclusive;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (warp == 0) scratch[lane] = warp_inclusive_sum(lane < group / 32 ? scratch[lane] : 0u, lane);
  barrier(CLK_LOCAL_MEM_FENCE);
  *total = scratch[31];
  return inclusive + (warp ? scratch[warp - 1] : 0u);
#else
  scratch[lid] = v;  // Hillis and Steele
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint d = 1; d < group; d *= 2) {
    const uint below = lid >= d ? scratch[lid - d] : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    scratch[lid] += below;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  *total = scratch[group - 1];
  return scratch[lid];
#endif
}
