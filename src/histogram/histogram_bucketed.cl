// Histogram `fast` beyond local memory, for 4- and 8-byte input (OpenCL 1.2): rows sorted into
// buckets, then each bucket counted in local memory, as CUDA does (cuda/kernels_bucketed.cuh).
// Counting 2^20 rows straight into global memory is bound by the atomics of the L2; moving each
// value's row instead costs 2 bytes written and read again. Built after histogram_rules.cl and
// histogram.cl (value_row, slot_of_row, add_count), with COUNT_VALUES 0. Each group does one
// piece of work, and every work-item meets every barrier (no barrier in a loop or after an early
// return: PoCL's CPU driver mishandled both).
//  bucket_rows: group g sorts tile g of TILE_LOADS 16-byte vectors a work-item: it places each
//   value by the rule and writes the tile's rows sorted by bucket (row >> shift) as 16-bit
//   offsets within the bucket, in the tile's own stretch of `sorted`; meta[bucket · tiles + tile]
//   holds the bucket's start | count << 16 in the tile, and `totals` each bucket's values in the
//   chunk. The sort is a counting sort in local memory: a count per bucket, an exclusive scan,
//   then a place per value by one local atomic. A tile whose values all share a row adds them
//   with one global atomic and sorts nothing.
//  count_buckets: a bucket of T values makes K = round(T / target) items (at least one), each an
//   equal share of the chunk's tiles; group g counts item g (groups past the last item, none):
//   the item's stretches (a work-item per tile) in a local histogram of the bucket's rows, then
//   each row to its slot's 64-bit count.

#define TILE_LOADS 4
#define MAX_BUCKETS 256

// Exclusive prefix sums of a[0, n) in place (n ≤ 32 · 32), by 32 work-items of runs of n / 32
// entries; returns the total. Every work-item of the group calls it.
uint local_exclusive_scan(__local uint* a, uint n, __local uint* parts) {
  const uint lid = get_local_id(0), per = (n + 31) / 32;
  if (lid < 32) {
    uint sum = 0;
    for (uint i = lid * per; i < min(n, (lid + 1) * per); ++i)
      sum += a[i];
    parts[lid] = sum;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    uint running = 0;
    for (uint i = 0; i < 32; ++i) {
      const uint part = parts[i];
      parts[i] = running;
      running += part;
    }
    parts[32] = running;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < 32) {
    uint running = parts[lid];
    for (uint i = lid * per; i < min(n, (lid + 1) * per); ++i) {
      const uint v = a[i];
      a[i] = running;
      running += v;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  return parts[32];
}

__kernel void bucket_rows(__global const uint4* in, long n, long first_vector, long count,
                          uint tiles, uint shift, uint buckets, uint counted, RULE_PARAMS,
                          __global ushort* sorted, __global uint* meta, __global uint* totals,
                          __global ulong* counts, __local ushort* staging, __local uint* cursor) {
  __local uint parts[33];
  __local uint leader;
  __local int one_row;
  const uint lid = get_local_id(0), group = get_local_size(0), tile = get_group_id(0);
  const uint tile_vectors = group * TILE_LOADS, tile_values = tile_vectors * VEC;
  const uint slot_bins = counted - 3, low = (1u << shift) - 1;
  T memo_value = 0;
  bool zero_exact;
  uint memo_row = quick_row(memo_value, RULE_ARGS, &zero_exact);
  if (!zero_exact) memo_row = CORRECTED_ROW(memo_value, memo_row);
  // The values after the last whole vector of the input (fewer than VEC): group 0 of the first
  // chunk, straight into the counts.
  if (first_vector == 0 && tile == 0) {
    __global const T* values = (__global const T*)in;
    for (long i = n / VEC * VEC + lid; i < n; i += group)
      add_count(counts,
                slot_of_row(value_row(values[i], RULE_ARGS, &memo_value, &memo_row), slot_bins), 1);
  }
  uint rows[TILE_LOADS * VEC];
#pragma unroll
  for (int u = 0; u < TILE_LOADS; ++u) {
    const long v = (long)tile * tile_vectors + u * group + lid;
    T values[VEC];
    VSTORE(AS_VTYPE(v < count ? in[first_vector + v] : (uint4)(0)), 0, values);
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      rows[u * VEC + k] =
          v < count ? value_row(values[k], RULE_ARGS, &memo_value, &memo_row) : NO_INDEX;
  }
  for (uint b = lid; b < buckets; b += group)
    cursor[b] = 0;
  if (lid == 0) {
    leader = rows[0];
    one_row = 1;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  bool same = true;
  for (int k = 0; k < TILE_LOADS * VEC; ++k)
    same &= rows[k] == leader;
  if (!same) atomic_and(&one_row, 0);
  barrier(CLK_LOCAL_MEM_FENCE);
  // A whole tile of one row (all-equal data, long runs) is one global add; its sort then sorts
  // nothing (every barrier is still met by every work-item: PoCL's CPU driver mishandled the
  // sort's barriers after an early return).
  if (one_row) {
    if (lid == 0) add_count(counts, slot_of_row(leader, slot_bins), tile_values);
    for (int k = 0; k < TILE_LOADS * VEC; ++k)
      rows[k] = NO_INDEX;
  }
  for (int k = 0; k < TILE_LOADS * VEC; ++k)
    if (rows[k] != NO_INDEX) atomic_inc(cursor + (rows[k] >> shift));
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint total = local_exclusive_scan(cursor, buckets, parts);
  uint start = 0, end = 0;
  if (lid < buckets) {
    start = cursor[lid];
    end = lid + 1 < buckets ? cursor[lid + 1] : total;
  }
  barrier(CLK_LOCAL_MEM_FENCE);  // the starts are read before values take places
  if (lid < buckets) {
    meta[(long)lid * tiles + tile] = start | (end - start) << 16;
    if (end > start) atomic_add(totals + lid, end - start);
  }
  for (int k = 0; k < TILE_LOADS * VEC; ++k)
    if (rows[k] != NO_INDEX) staging[atomic_inc(cursor + (rows[k] >> shift))] = rows[k] & low;
  barrier(CLK_LOCAL_MEM_FENCE);
  __global ushort* out = sorted + (long)tile * tile_values;
  for (uint i = lid; i < total; i += group)
    out[i] = staging[i];
}

// `totals` holds the buckets' totals.
__kernel void count_buckets(__global const ushort* sorted, __global const uint* meta,
                            __global const uint* totals, uint tiles, uint tile_values, uint shift,
                            uint buckets, ulong target, uint counted, __local uint* hist,
                            __global ulong* counts) {
  __local uint first_item[MAX_BUCKETS + 1];  // a bucket's first item; then all items
  __local uint parts[33];
  const uint lid = get_local_id(0), group = get_local_size(0), index = get_group_id(0);
  const uint bucket_rows = 1u << shift, slot_bins = counted - 3;
  for (uint b = lid; b < buckets; b += group)
    first_item[b] = totals[b] ? (uint)max((ulong)1, (totals[b] + target / 2) / target) : 0;
  for (uint r = lid; r < bucket_rows; r += group)
    hist[r] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint items = local_exclusive_scan(first_item, buckets, parts);
  // Groups past the last item count nothing (every work-item still meets the barrier below).
  uint bucket = 0, begin = 0, end = 0;
  if (index < items) {
    for (uint step = MAX_BUCKETS; step; step /= 2)  // the last bucket whose first item ≤ index
      if (bucket + step < buckets && first_item[bucket + step] <= index) bucket += step;
    const ulong k = index - first_item[bucket];
    const ulong of = (bucket + 1 < buckets ? first_item[bucket + 1] : items) - first_item[bucket];
    begin = (uint)(k * tiles / of);
    end = (uint)((k + 1) * tiles / of);
  }
  for (uint t = begin + lid; t < end; t += group) {
    const uint m = meta[(long)bucket * tiles + t];
    __global const ushort* stretch = sorted + (long)t * tile_values + (m & 0xFFFFu);
    for (uint j = 0; j < m >> 16; ++j)
      atomic_inc(hist + stretch[j]);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint row0 = bucket << shift;
  for (uint r = lid; index < items && r < bucket_rows && row0 + r < counted; r += group)
    if (hist[r]) add_count(counts, slot_of_row(row0 + r, slot_bins), hist[r]);
}
