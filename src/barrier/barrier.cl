// Grid barriers in OpenCL C 1.2, built on parpat/opencl/grid_barrier.cl (prepended by the host,
// which also supplies its bounded poll parpat_barrier_give_up). BARRIER_METHOD picks the
// method of grid_sync(): 0 atomic-all, 1 representative, 2 flags, 3 flip. The kernels are the
// classic stencil, the early-release stress test and an empty loop of barriers for latency,
// plus the one-phase kernels of `relaunch`.
//
// The classic methods keep their idea and lose their races: atomic-all and representative
// used to reset the counter once it was full, racing with groups that already arrived at the
// next barrier; here the counter only grows and barrier k waits for k · participants (compared
// as a signed difference, so wrap-around is harmless). Xiao & Feng's flags were plain,
// unfenced and, in common versions, cleared for reuse; here they hold the barrier number and
// are written after a global fence. Shared data go through volatile pointers (see the header).
//
// state: [0] arrival word or counter, [1] error word, [2, 2 + G) flags `in`, [2 + G, 2 + 2G)
// flags `out`.
#ifndef BARRIER_METHOD
#define BARRIER_METHOD 3
#endif

bool reached(uint value, uint target) {
  return (int)(value - target) >= 0;
}

// Waits until *p reaches target; returns false once parpat_barrier_give_up says so.
bool wait_until(volatile __global uint* p, uint target, volatile __global uint* error) {
  for (uint polls = 1u; !reached(*p, target); ++polls)
    if (parpat_barrier_give_up(error, polls)) return false;
  return true;
}

bool grid_sync(volatile __global uint* state, __local uint* flag, uint* epoch) {
#if BARRIER_METHOD == 0
  // Every work-item arrives; no group barrier at all.
  uint participants = (uint)(get_num_groups(0) * get_local_size(0));
  uint target = ++*epoch * participants;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  atomic_inc(&state[0]);
  bool ok = wait_until(&state[0], target, &state[1]);
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  return ok;
#elif BARRIER_METHOD == 1
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  ++*epoch;
  if (get_local_id(0) == 0) {
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    atomic_inc(&state[0]);
    *flag = wait_until(&state[0], *epoch * (uint)get_num_groups(0), &state[1]) ? 1u : 0u;
    mem_fence(CLK_GLOBAL_MEM_FENCE);
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  return *flag != 0u;
#elif BARRIER_METHOD == 2
  uint groups = (uint)get_num_groups(0);
  volatile __global uint* in = state + 2;
  volatile __global uint* out = state + 2 + groups;
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  uint epoch_now = ++*epoch;
  if (get_group_id(0) == 0) {
    // Group 0's work-items gather the flags of groups 1..G-1, meet, then release them.
    if (get_local_id(0) == 0) *flag = 1u;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint ok = 1u;
    for (uint g = (uint)get_local_id(0) + 1u; ok && g < groups; g += (uint)get_local_size(0))
      ok = wait_until(&in[g], epoch_now, &state[1]) ? 1u : 0u;
    if (!ok) *flag = 0u;
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    bool all = *flag != 0u;
    for (uint g = (uint)get_local_id(0) + 1u; all && g < groups; g += (uint)get_local_size(0))
      out[g] = epoch_now;
    barrier(CLK_LOCAL_MEM_FENCE);
    return all;
  }
  if (get_local_id(0) == 0) {
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    in[get_group_id(0)] = epoch_now;
    *flag = wait_until(&out[get_group_id(0)], epoch_now, &state[1]) ? 1u : 0u;
    mem_fence(CLK_GLOBAL_MEM_FENCE);
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  return *flag != 0u;
#else
  return parpat_grid_sync(state, flag);
#endif
}

__kernel void stencil(volatile __global uint* state, volatile __global uint* a, uint n,
                      long steps) {
  __local uint flag;
  uint epoch = 0u;
  uint i = (uint)get_global_id(0);
  uint right = i + 1u < n ? i + 1u : i + 1u - n;
  uint right2 = i + 2u < n ? i + 2u : i + 2u - n;
  for (long s = 0; s < steps; ++s) {
    uint t = a[i] + a[right] + a[right2];
    if (!grid_sync(state, &flag, &epoch)) return;
    a[i] = t;
    if (!grid_sync(state, &flag, &epoch)) return;
  }
}

// The last work-item of each group publishes the round (not work-item 0, which arrives for the
// group in most methods, so the barrier must also publish the others' writes); after the
// barrier every work-item checks the next group and the group half-way round, which must hold
// this round or the next. Counts of early releases are capped per work-item so the 32-bit total
// cannot wrap back to zero.
__kernel void stress(volatile __global uint* state, volatile __global uint* slots,
                     __global uint* early, uint rounds) {
  __local uint flag;
  uint epoch = 0u;
  uint groups = (uint)get_num_groups(0), g = (uint)get_group_id(0);
  uint next = (g + 1u) % groups, far = (g + groups / 2u) % groups;
  uint seen = 0u;
  for (uint round = 1u; round <= rounds; ++round) {
    if (get_local_id(0) == get_local_size(0) - 1) slots[g] = round;
    if (!grid_sync(state, &flag, &epoch)) break;
    seen += (slots[next] - round > 1u) ? 1u : 0u;
    seen += (slots[far] - round > 1u) ? 1u : 0u;
  }
  if (seen) atomic_add(early, min(seen, 0xffffu));
}

__kernel void latency(volatile __global uint* state, int barriers) {
  __local uint flag;
  uint epoch = 0u;
  for (int k = 0; k < barriers; ++k)
    if (!grid_sync(state, &flag, &epoch)) return;
}

__kernel void stencil_step(__global const uint* a, __global uint* b, uint n) {
  uint i = (uint)get_global_id(0);
  uint right = i + 1u < n ? i + 1u : i + 1u - n;
  uint right2 = i + 2u < n ? i + 2u : i + 2u - n;
  b[i] = a[i] + a[right] + a[right2];
}

__kernel void stress_publish(__global uint* slots, uint round) {
  if (get_local_id(0) == 0) slots[get_group_id(0)] = round;
}

__kernel void stress_check(__global const uint* slots, uint round, __global uint* early) {
  uint groups = (uint)get_num_groups(0), g = (uint)get_group_id(0);
  uint seen = (slots[(g + 1u) % groups] != round ? 1u : 0u) +
              (slots[(g + groups / 2u) % groups] != round ? 1u : 0u);
  if (seen) atomic_add(early, seen);
}

__kernel void empty() {}
