// mbarriers, asynchronous stores and bulk copies between the blocks of a thread-block cluster
// (sm_90 PTX), for the push forms of cluster_exchange_floor. Addresses are 32-bit shared ones;
// `remote` ones are another block's (mapa).
#pragma once

namespace cluster_async {

__device__ unsigned shared_address(const void* p) {
  return unsigned(__cvta_generic_to_shared(p));
}
__device__ unsigned remote(unsigned address, unsigned rank) {
  unsigned out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(out) : "r"(address), "r"(rank));
  return out;
}
__device__ void barrier_init(unsigned bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(arrivals) : "memory");
}
// This block's arrival on its own barrier, expecting `bytes` more of bulk copies in the phase.
__device__ void arrive_expecting(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}
// Release at cluster scope is a GPU-scope memory barrier (waiting for the thread's loads in
// flight); relaxed is none, for push, sorted, whose hand-back follows a block barrier after its
// reads of the inbox have completed (their values counted) and whose data is counted in bytes.
template <bool kRelaxed>
__device__ void arrive_remote(unsigned remote_bar) {
  if constexpr (kRelaxed)
    asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote_bar)
                 : "memory");
  else
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote_bar)
                 : "memory");
}
// Waits until the barrier's phase of this parity is complete, at most about 2 s (relaxed: at
// block scope, without the cluster-scope acquire's invalidation of the L1).
template <bool kRelaxed>
__device__ void wait_phase(unsigned bar, unsigned parity) {
  const long long start = clock64();
  for (;;) {
    unsigned done;
    if constexpr (kRelaxed)
      asm volatile(
          "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
          "selp.u32 %0, 1, 0, p; }"
          : "=r"(done)
          : "r"(bar), "r"(parity)
          : "memory");
    else
      asm volatile(
          "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; "
          "selp.u32 %0, 1, 0, p; }"
          : "=r"(done)
          : "r"(bar), "r"(parity)
          : "memory");
    if (done) return;
    if (clock64() - start > (1ll << 32)) __trap();
  }
}
// A 16-byte vector into another block's shared memory, completing on its barrier.
__device__ void store_remote(unsigned remote_to, const uint4& v, unsigned remote_bar) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, "
      "[%5];" ::"r"(remote_to),
      "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "r"(remote_bar)
      : "memory");
}
// `bytes` from this block's shared memory into another block's, completing on its barrier.
__device__ void bulk_copy(unsigned remote_to, unsigned from, unsigned bytes, unsigned remote_bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, "
      "[%3];" ::"r"(remote_to),
      "r"(from), "r"(bytes), "r"(remote_bar)
      : "memory");
}

}  // namespace cluster_async
