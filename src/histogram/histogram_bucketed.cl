// Histogram `fast` beyond local memory, for 4- and 8-byte input (OpenCL 1.2): rows sorted into
// buckets, then each bucket counted in local memory, as CUDA does (cuda/kernels_bucketed.cuh).
// Counting 2^20 rows straight into global memory is bound by the atomics of the L2; moving each
// value's row instead costs 2 bytes written and read again. Built after histogram_rules.cl,
// histogram_sink.cl, histogram.cl (quick_row, corrected_row, slot_of_row, add_count) and
// histogram_warp.cl, with COUNT_VALUES 0.
// With NVIDIA_PTX the local atomics, the scans and the count's numbering take NVIDIA's warp
// instructions (PTX); elsewhere plain OpenCL C. Every work-item meets every barrier of a group.
//  bucket_rows: groups take whole tiles of TILE_LOADS 16-byte vectors a work-item in turn, the
//   next tile's vectors loading while one is sorted. A tile's values are placed by the rule and
//   its rows written sorted by bucket (row >> shift) as 16-bit offsets within the bucket, in the
//   tile's own stretch of `sorted` (`stride` rows); meta[bucket · tiles + tile] holds the
//   bucket's start | count << 16 in the tile, and `totals` each bucket's values in the chunk.
//   The sort is a counting sort in local memory: a count per (bucket, column), `columns`
//   counters a bucket so that neighbouring work-items' atomics do not meet, an exclusive scan,
//   then a place per value by one local atomic. Each bucket's stretch is rounded up to whole
//   16-byte vectors with rows of offset 0, which the count takes away again. A tile whose values
//   all share a row adds them with one global atomic and sorts nothing; with SAME_VECTORS a
//   vector whose values share their bits is placed once.
//  bucket_leftovers: the values after the last whole tile, straight into the counts.
//  count_buckets: a bucket of T values makes K = round(T / target) items (at least one), each an
//   equal share of the chunk's tiles; group g counts item g (groups past the last item, none)
//   in a local histogram of the bucket's rows, then adds each row to its slot's 64-bit count.
//   With NVIDIA_PTX a warp takes 32 tiles at once and numbers their stretches' 16-byte vectors
//   through, its lanes taking the vectors in turn, VECTORS_AHEAD in flight (short stretches
//   leave no lane idle); elsewhere a work-item reads a tile's stretch.

#define TILE_LOADS 4
#define MAX_BUCKETS 256
#define BUCKET_PAD 8  // a bucket's stretch in a tile: whole 16-byte vectors of 16-bit offsets
#define VECTORS_AHEAD 8
#ifndef SAME_VECTORS
#define SAME_VECTORS 0  // whether a vector of one value's bits is placed once
#endif
#ifndef BUCKET_GROUP
#define BUCKET_GROUP 1024  // work-items of every group, set by the host (registers follow it)
#endif

uint padded_rows(uint count) {
  return (count + BUCKET_PAD - 1) / BUCKET_PAD * BUCKET_PAD;
}

// Exclusive prefix sums of a[0, n) in place (n ≤ 4 · group, the group a multiple of 32 and at
// most 1024), where `a` holds a bucket's `columns` counters (4 or more) after another: each
// bucket's sum is rounded up by padded_rows (the pads placed after its last column's values)
// and written to bucket_count, unpadded. Returns the padded total. `scratch` holds a uint a
// work-item. Every work-item of the group calls it.
uint bucket_scan(__local uint* a, uint n, uint columns, __local uint* bucket_count,
                 __local uint* scratch) {
  const uint lid = get_local_id(0), first = lid * 4;
  uint v[4], sum = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    v[k] = first + k < n ? a[first + k] : 0u;
    sum += v[k];
  }
  const uint threads = columns / 4;  // work-items of a bucket's columns
#if NVIDIA_PTX
  uint bucket = sum;
  for (uint d = 1; d < threads; d *= 2)
    bucket += shfl_xor(bucket, d);
#else
  scratch[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint bucket = 0;
  for (uint i = lid / threads * threads; i < lid / threads * threads + threads; ++i)
    bucket += scratch[i];
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  if (lid % threads == threads - 1 && first < n) {
    bucket_count[lid / threads] = bucket;
    v[3] += padded_rows(bucket) - bucket;
    sum += padded_rows(bucket) - bucket;
  }
  uint total;
  uint running = group_inclusive_sum(sum, scratch, &total) - sum;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if (first + k < n) a[first + k] = running;
    running += v[k];
  }
  barrier(CLK_LOCAL_MEM_FENCE);  // scratch may be reused
  return total;
}

// A tile's TILE_LOADS vectors of this work-item (zeros past the chunk's tiles).
void load_tile(__global const uint4* chunk, uint tile, uint tiles, uint4* next) {
  const uint lid = get_local_id(0), group = get_local_size(0);
#pragma unroll
  for (int u = 0; u < TILE_LOADS; ++u)
    next[u] = tile < tiles ? chunk[(long)tile * group * TILE_LOADS + u * group + lid] : (uint4)(0);
}

// `staging` holds a tile's rows and pads (stride rows, 16-byte aligned), `cursor` buckets ·
// columns counters, `bucket_count` a count a bucket; buckets ≤ the group's work-items.
__kernel __attribute__((reqd_work_group_size(BUCKET_GROUP, 1, 1))) void bucket_rows(
    __global const uint4* in, long first_vector, uint tiles, uint shift, uint buckets, uint columns,
    uint stride, uint counted, RULE_PARAMS, __global ushort* sorted, __global uint* meta,
    __global uint* totals, __global ulong* counts, __local uint4* staging, __local uint* cursor,
    __local uint* bucket_count) {
  __local uint leader;
  __local int one_row;
  __local ushort* staged = (__local ushort*)staging;
  const uint lid = get_local_id(0), group = get_local_size(0), groups = get_num_groups(0);
  const uint tile_values = group * TILE_LOADS * VEC, slot_bins = counted - 3;
  const uint entries = buckets * columns, low = (1u << shift) - 1;
  __global const uint4* chunk = in + first_vector;
#if NVIDIA_PTX
  // Counter (bucket, column) lies at column_base + bucket · bucket_stride (local addresses),
  // opaque to the compiler so that each address is one multiply-add.
  uint column_base = LOCAL_ADDRESS(cursor + lid % columns), bucket_stride = columns * 4;
  asm volatile("" : "+r"(column_base), "+r"(bucket_stride));
#define COUNTER(r) (column_base + ((r) >> shift) * bucket_stride)
#else
#define COUNTER(r) (cursor + ((r) >> shift) * columns + lid % columns)
#endif
  T memo_value = 0;
  bool zero_exact;
  uint memo_row = quick_row(memo_value, RULE_ARGS, &zero_exact);
  if (!zero_exact) memo_row = CORRECTED_ROW(memo_value, memo_row);
  uint4 next[TILE_LOADS];
  load_tile(chunk, get_group_id(0), tiles, next);
  for (uint tile = get_group_id(0); tile < tiles; tile += groups) {
    // Rows of this tile, while the next tile's vectors load (8-byte input: each vector loaded
    // again as soon as it is taken, its values too few to hide the loads otherwise).
    uint rows[TILE_LOADS * VEC];
#pragma unroll
    for (int u = 0; u < TILE_LOADS; ++u) {
      const uint4 vector = next[u];
      T values[VEC];
      VSTORE(AS_VTYPE(vector), 0, values);
      if (VEC == 2) {
        const uint ahead = tile + groups;
        next[u] =
            ahead < tiles ? chunk[(long)ahead * group * TILE_LOADS + u * group + lid] : (uint4)(0);
      }
      if (SAME_VECTORS && same_values(vector)) {  // one value's bits: one row
        bool exact;
        uint r = quick_row(values[0], RULE_ARGS, &exact);
        if (!exact) r = corrected_row(values[0], r, RULE_ARGS, &memo_value, &memo_row);
#pragma unroll
        for (int k = 0; k < VEC; ++k)
          rows[u * VEC + k] = r;
      } else {
        // The vector's quick rows first, then its rare inexact values corrected: a test a
        // vector, not a branch a value.
        uint inexact = 0;
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
          bool exact;
          rows[u * VEC + k] = quick_row(values[k], RULE_ARGS, &exact);
          inexact |= (uint)!exact << k;
        }
        if (inexact) {
#pragma unroll
          for (int k = 0; k < VEC; ++k)
            if (inexact >> k & 1)
              rows[u * VEC + k] =
                  corrected_row(values[k], rows[u * VEC + k], RULE_ARGS, &memo_value, &memo_row);
        }
      }
    }
    if (VEC != 2) load_tile(chunk, tile + groups, tiles, next);
    for (uint i = lid; i < entries; i += group)
      cursor[i] = 0;
    if (lid == 0) {
      leader = rows[0];
      one_row = 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    bool same = true;
#pragma unroll
    for (int k = 0; k < TILE_LOADS * VEC; ++k)
      same &= rows[k] == leader;
    if (!same) one_row = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (one_row) {  // a whole tile of one row (all-equal data, long runs)
      if (lid == 0) add_count(counts, slot_of_row(leader, slot_bins), tile_values);
      for (uint b = lid; b < buckets; b += group)
        meta[(long)b * tiles + tile] = 0;
    } else {
#pragma unroll
      for (int k = 0; k < TILE_LOADS * VEC; ++k)
        count_one(COUNTER(rows[k]));
      barrier(CLK_LOCAL_MEM_FENCE);
      const uint total =
          bucket_scan(cursor, entries, columns, bucket_count, (__local uint*)staging);
      uint start = 0, count = 0;
      if (lid < buckets) {
        start = cursor[lid * columns];
        count = bucket_count[lid];
      }
      barrier(CLK_LOCAL_MEM_FENCE);  // the starts are read before values take places
      if (lid < buckets) {
        meta[(long)lid * tiles + tile] = start | count << 16;
        if (count) atomic_add(totals + lid, count);
        for (uint pad = start + count; pad < start + padded_rows(count); ++pad)
          staged[pad] = 0;
      }
      // The places first, then the stores: the atomics go out back to back.
      uint places[TILE_LOADS * VEC];
#pragma unroll
      for (int k = 0; k < TILE_LOADS * VEC; ++k)
        places[k] = take_one(COUNTER(rows[k]));
#pragma unroll
      for (int k = 0; k < TILE_LOADS * VEC; ++k)
        staged[places[k]] = (ushort)(rows[k] & low);
      barrier(CLK_LOCAL_MEM_FENCE);
      __global uint4* out = (__global uint4*)(sorted + (long)tile * stride);
      for (uint i = lid; i < total / 8; i += group)
        out[i] = staging[i];
    }
    // The next tile zeroes `cursor` and writes `leader` and `one_row` only after every
    // work-item has read them; `staging` is written again after two more barriers.
  }
#undef COUNTER
}

// The values in[begin, n) straight into the counts.
__kernel void bucket_leftovers(__global const T* in, long begin, long n, uint counted, RULE_PARAMS,
                               __global ulong* counts) {
  T memo_value = 0;
  bool zero_exact;
  uint memo_row = quick_row(memo_value, RULE_ARGS, &zero_exact);
  if (!zero_exact) memo_row = CORRECTED_ROW(memo_value, memo_row);
  for (long i = begin + get_global_id(0); i < n; i += get_global_size(0))
    add_count(counts, slot_of_row(value_row(in[i], RULE_ARGS, &memo_value, &memo_row), counted - 3),
              1);
}

#if NVIDIA_PTX
// Counts the stretches of tiles [begin, end) of one bucket (`starts`: their meta) into `hist`;
// returns the pad rows (of offset 0) this warp counted. A warp takes 32 tiles at a time: lane l
// reads tile l's start and count. The tiles' whole vectors are numbered through (a warp scan)
// and the lanes take them in turn, VECTORS_AHEAD windows of 32 at once. A lane finds its
// vector's tile without a search: the tiles that hold vectors, in order, keep their bases in
// `bases` (so that vector v of such a tile lies at base + 8·v), and the lane's is the one after
// those that start before the window and those that start in it up to the lane. Rows of the
// chunk are fewer than 2^32; a base may wrap, base + 8·v not.
uint count_stretches(__global const ushort* sorted, __global const uint* starts, uint begin,
                     uint end, uint stride, __local uint* hist, __local uint* bases) {
  const uint lane = lane_id(), warp = get_local_id(0) / 32, warps = get_local_size(0) / 32;
  const uint below_me = lanes_below(), up_to_me = lanes_up_to();
  const uint hist_base = LOCAL_ADDRESS(hist);
  uint pads = 0;
  for (uint t0 = begin + warp * 32; t0 < end; t0 += warps * 32) {
    const uint t = t0 + lane;
    const uint m = t < end ? starts[t] : 0u;
    const uint count = m >> 16, vectors = padded_rows(count) / BUCKET_PAD;
    pads += padded_rows(count) - count;
    const uint inclusive = warp_inclusive_sum(vectors, lane);
    const uint total = shfl_from(inclusive, 31);
    const uint first = inclusive - vectors;  // the tile's first vector in the numbering
    const bool holds = vectors != 0;
    const uint holding = ballot(holds);
    warp_barrier();
    if (holds)
      bases[popcount(holding & below_me)] = t * stride + (m & 0xFFFFu) - first * BUCKET_PAD;
    warp_barrier();
    const uint lane_base = bases[lane];  // of the lane-th tile that holds vectors
    for (uint v0 = 0; v0 < total; v0 += 32 * VECTORS_AHEAD) {
      uint4 raw[VECTORS_AHEAD];
#pragma unroll
      for (uint a = 0; a < VECTORS_AHEAD; ++a) {
        const uint window = v0 + a * 32, v = window + lane;
        raw[a] = (uint4)(0);
        if (window < total) {
          const bool starts_in = holds && first - window < 32u;
          const uint window_starts = warp_or(starts_in ? 1u << (first - window) : 0u);
          const uint before = popcount(ballot(holds && first < window));
          const uint base_of_v =
              shfl_from(lane_base, before - 1 + popcount(window_starts & up_to_me));
          if (v < total)
            raw[a] = *(__global const uint4*)(sorted + (uint)(base_of_v + v * BUCKET_PAD));
        }
      }
#pragma unroll
      for (uint a = 0; a < VECTORS_AHEAD; ++a) {
        if (v0 + a * 32 + lane < total) {
          const uint words[4] = {raw[a].x, raw[a].y, raw[a].z, raw[a].w};
#pragma unroll
          for (int k = 0; k < 8; ++k)
            count_one(hist_base + (words[k / 2] >> (16 * (k % 2)) & 0xFFFFu) * 4);
        }
      }
    }
  }
  warp_barrier();  // `bases` is written again by the warp only after all its lanes read it
  return warp_add(pads);
}
#else
// Counts the stretches of tiles [begin, end) of one bucket (`starts`: their meta) into `hist`,
// a work-item a tile; returns 0 (no pads counted).
uint count_stretches(__global const ushort* sorted, __global const uint* starts, uint begin,
                     uint end, uint stride, __local uint* hist, __local uint* bases) {
  for (uint t = begin + get_local_id(0); t < end; t += get_local_size(0)) {
    const uint m = starts[t];
    __global const ushort* stretch = sorted + (long)t * stride + (m & 0xFFFFu);
    for (uint j = 0; j < m >> 16; ++j)
      atomic_inc(hist + stretch[j]);
  }
  return 0;
}
#endif

// `hist` holds a bucket's rows (1 << shift).
__kernel __attribute__((reqd_work_group_size(BUCKET_GROUP, 1, 1))) void count_buckets(
    __global const ushort* sorted, __global const uint* meta, __global const uint* totals,
    uint tiles, uint stride, uint shift, uint buckets, ulong target, uint counted,
    __local uint* hist, __global ulong* counts) {
  __local uint first_item[MAX_BUCKETS];                  // a bucket's first item
  __local uint scratch[NVIDIA_PTX ? 32 : BUCKET_GROUP];  // group_inclusive_sum's
  __local uint bases[32 * 32];  // a warp's tiles that hold vectors (count_stretches)
  __local uint pads;            // rows of offset 0 counted only to fill out vectors
  const uint lid = get_local_id(0), group = get_local_size(0), index = get_group_id(0);
  const uint bucket_rows = 1u << shift, slot_bins = counted - 3;
  for (uint r = lid; r < bucket_rows; r += group)
    hist[r] = 0;
  if (lid == 0) pads = 0;
  // Work-item b takes bucket b's items (buckets ≤ the group's work-items).
  const uint own_items =
      lid < buckets && totals[lid] ? (uint)max((ulong)1, (totals[lid] + target / 2) / target) : 0;
  uint items;
  const uint first = group_inclusive_sum(own_items, scratch, &items) - own_items;
  if (lid < buckets) first_item[lid] = first;
  barrier(CLK_LOCAL_MEM_FENCE);
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
  const uint warp_pads = count_stretches(sorted, meta + (long)bucket * tiles, begin, end, stride,
                                         hist, bases + lid / 32 * 32);
  if (lid % 32 == 0 && warp_pads) atomic_add(&pads, warp_pads);
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint row0 = bucket << shift;
  for (uint r = lid; index < items && r < bucket_rows && row0 + r < counted; r += group) {
    const uint n = hist[r] - (r == 0 ? pads : 0u);
    if (n) add_count(counts, slot_of_row(row0 + r, slot_bins), n);
  }
}
