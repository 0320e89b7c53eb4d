// parpat/opencl/grid_barrier.cl — a grid-wide barrier for users' own OpenCL C 1.2 kernels.
// Prepend this file to your program source and call parpat_grid_sync() from every work-item
// of every group the same number of times.
//
// A grid barrier is only correct when every group of the launch is resident at once, which
// OpenCL never promises: launch at most the group count that parpat's host helper
// (parpat::opencl_grid_barrier_groups) returns for the device; it refuses devices without
// independent forward progress of groups (PoCL and other CPU drivers, which run groups one
// after another, so the first waiting group would wait forever) and platforms where the
// stress test fails.
//
// The method is `flip`: one 32-bit arrival word. Group 0 adds 0x80000000 − (n − 1), every other
// group adds 1; the sum of all n additions is exactly 0x80000000, so bit 31 flips when the last
// group arrives and never before. Waiters poll until bit 31 differs from the value their own
// atomic returned. Nothing is ever reset, so nothing can race with a reset.
//
// OpenCL C 1.2 has no acquire/release atomics; ordering rests on mem_fence(CLK_GLOBAL_MEM_FENCE)
// around the arrival and on volatile accesses, which on GPUs bypass the non-coherent
// per-compute-unit caches. Data that other groups read after the barrier must therefore be
// accessed through volatile __global pointers (or atomics). This is why parpat enables spin
// barriers on a platform only after its stress test passed there.
//
// Never hang: each wait polls at most PARPAT_BARRIER_SPIN_LIMIT times; past that it sets the
// error word (state[1]) and parpat_grid_sync() returns false in every work-item of the group;
// other waiters see the error word within 256 polls and return false too.
//
// state: two zeroed uints in global memory (state[0] arrival word, state[1] error word); a
// completed launch leaves them ready for the next. flag: one __local uint per group.
#ifndef PARPAT_GRID_BARRIER_CL
#define PARPAT_GRID_BARRIER_CL

#ifndef PARPAT_BARRIER_SPIN_LIMIT
#define PARPAT_BARRIER_SPIN_LIMIT (1u << 22)
#endif

// Whether a waiter that has polled `polls` times must give up: the error word is set, or the
// bound is passed (then it sets the error word). Checked every 256 polls.
uint parpat_barrier_give_up(volatile __global uint* error, uint polls) {
  if ((polls & 255u) != 0u) return 0u;
  if (*error != 0u) return 1u;
  if (polls < PARPAT_BARRIER_SPIN_LIMIT) return 0u;
  atomic_xchg(error, 1u);
  return 1u;
}

bool parpat_grid_sync(volatile __global uint* state, __local uint* flag) {
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (get_local_id(0) == 0 && get_local_id(1) == 0 && get_local_id(2) == 0) {
    uint groups = (uint)(get_num_groups(0) * get_num_groups(1) * get_num_groups(2));
    bool master = get_group_id(0) == 0 && get_group_id(1) == 0 && get_group_id(2) == 0;
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    uint old = atomic_add(&state[0], master ? 0x80000000u - (groups - 1u) : 1u);
    uint ok = 1u;
    for (uint polls = 1u; ((state[0] ^ old) & 0x80000000u) == 0u; ++polls) {
      if (parpat_barrier_give_up(&state[1], polls)) {
        ok = 0u;
        break;
      }
    }
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    *flag = ok;
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  return *flag != 0u;
}

#endif  // PARPAT_GRID_BARRIER_CL
