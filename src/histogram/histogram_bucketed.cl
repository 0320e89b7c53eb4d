// Histogram `fast` beyond local memory, for 4- and 8-byte input (OpenCL 1.2): rows sorted into
// buckets, then each bucket counted in local memory, as CUDA does (cuda/kernels_bucketed.cuh).
// Counting 2^20 rows straight into global memory is bound by the atomics of the L2; moving each
// value's row instead costs 2 bytes written and read again. Built after histogram_rules.cl,
// histogram_sink.cl and histogram.cl (vector_rows, value_row, slot_of_row, add_count, word_add),
// with COUNT_VALUES 0. Every work-item meets every barrier: no early return, and loops around
// barriers run the same trips on every work-item of a group (TILES_IN_TURN: where groups run side
// by side; a CPU driver gets a group a tile).
//  bucket_rows: a group takes tiles of TILE_LOADS 16-byte vectors a work-item in turn (the next
//   tile's vectors load while it sorts this one), places each value by the rule and writes the
//   tile's rows sorted by bucket (row >> shift) as 16-bit offsets within the bucket, in the tile's
//   own stretch of `sorted`; meta[bucket · tiles + tile] holds the bucket's start | count << 16 in
//   the tile, and `totals` each bucket's values in the chunk. The sort is a counting sort in local
//   memory: a count per (bucket, column) (the work-items of one bucket spread over SORT_COLUMNS
//   counters), an exclusive scan, then a place per value by one local atomic; the sorted rows
//   leave as 16-byte stores. A tile whose values all share a row adds them with one global atomic
//   and sorts nothing.
//  count_buckets: a bucket of T values makes K = round(T / target) items (at least one), each an
//   equal share of the chunk's tiles; group g counts item g (groups past the last item, none).
//   Teams of 32 work-items take 32 tiles at a time and read each tile's stretch with 16-byte
//   loads, ITEM_TILES_AHEAD stretches in flight, into a local histogram of the bucket's rows;
//   then each row goes to its slot's 64-bit count.

#define TILE_LOADS 4
#define MAX_BUCKETS 256
#define SORT_COLUMNS 8
#define ITEM_TILES_AHEAD 4

// One local counter up by one, its old value unused.
#if NVIDIA_PTX
void local_increment(__local uint* words, uint index) {
  const uint address = (uint)(size_t)words + index * 4;
  asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(address) : "memory");
}
// Whether `flag` holds on every work-item of the group; a barrier as well (bar.red, as CUDA's
// __syncthreads_and).
bool group_all(bool flag, __local int* scratch) {
  uint all;
  asm volatile(
      "{.reg .pred p, q; setp.ne.u32 p, %1, 0; bar.red.and.pred q, 0, p; selp.u32 %0, 1, 0, q;}"
      : "=r"(all)
      : "r"((uint)flag)
      : "memory");
  return all != 0;
}
#else
void local_increment(__local uint* words, uint index) {
  atomic_inc(words + index);
}
bool group_all(bool flag, __local int* scratch) {
  if (get_local_id(0) == 0) *scratch = 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!flag) atomic_and(scratch, 0);
  barrier(CLK_LOCAL_MEM_FENCE);
  const bool all = *scratch != 0;
  barrier(CLK_LOCAL_MEM_FENCE);  // read by all before the next call writes it
  return all;
}
#endif

// Exclusive prefix sums of a[0, n) in place (n ≤ 32 · 32), by 32 work-items of runs of n / 32
// entries, each of which adds up the runs before its own; returns the total. Every work-item of
// the group calls it.
uint local_exclusive_scan(__local uint* a, uint n, __local uint* parts) {
  const uint lid = get_local_id(0), per = (n + 31) / 32;
  if (lid < 32) {
    uint sum = 0;
    for (uint i = lid * per; i < min(n, (lid + 1) * per); ++i)
      sum += a[i];
    parts[lid] = sum;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  uint total = 0;
  if (lid < 32) {
    uint running = 0;
    for (uint i = 0; i < 32; ++i) {
      const uint part = parts[i];
      running += i < lid ? part : 0;
      total += part;
    }
    for (uint i = lid * per; i < min(n, (lid + 1) * per); ++i) {
      const uint v = a[i];
      a[i] = running;
      running += v;
    }
    if (lid == 0) parts[32] = total;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  return parts[32];
}

// Loads tile `tile`'s vectors of this work-item (zeros past the chunk).
void load_tile(__global const uint4* in, long first_vector, long count, uint tile,
               uint tile_vectors, uint4* raw) {
  const uint lid = get_local_id(0), group = get_local_size(0);
#pragma unroll
  for (int u = 0; u < TILE_LOADS; ++u) {
    const long v = (long)tile * tile_vectors + u * group + lid;
    raw[u] = v < count ? in[first_vector + v] : (uint4)(0);
  }
}

__kernel void bucket_rows(__global const uint4* in, long n, long first_vector, long count,
                          uint tiles, uint shift, uint buckets, uint counted, RULE_PARAMS,
                          __global ushort* sorted, __global uint* meta, __global uint* totals,
                          __global ulong* counts, __local ushort* staging, __local uint* cursor) {
  __local uint bucket_start[MAX_BUCKETS];
  __local uint parts[33];
  __local uint leader;
  __local int scratch;
  const uint lid = get_local_id(0), group = get_local_size(0);
  const uint tile_vectors = group * TILE_LOADS, tile_values = tile_vectors * VEC;
  const uint slot_bins = counted - 3, low = (1u << shift) - 1, column = lid % SORT_COLUMNS;
  T memo_value = 0;
  bool zero_exact;
  uint memo_row = quick_row(memo_value, RULE_ARGS, &zero_exact);
  if (!zero_exact) memo_row = CORRECTED_ROW(memo_value, memo_row);
  // The values after the last whole vector of the input (fewer than VEC): group 0 of the first
  // chunk, straight into the counts.
  if (first_vector == 0 && get_group_id(0) == 0) {
    __global const T* values = (__global const T*)in;
    for (long i = n / VEC * VEC + lid; i < n; i += group)
      add_count(counts,
                slot_of_row(value_row(values[i], RULE_ARGS, &memo_value, &memo_row), slot_bins), 1);
  }
  uint4 next[TILE_LOADS];
  load_tile(in, first_vector, count, get_group_id(0), tile_vectors, next);
#if TILES_IN_TURN
  for (uint tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
#else
  {  // a group a tile (PoCL's CPU driver mishandles this kernel's barriers in a loop)
    const uint tile = get_group_id(0);
#endif
    // Rows of this tile (NO_INDEX past the chunk), while the next tile's vectors load.
    uint rows[TILE_LOADS * VEC];
#pragma unroll
    for (int u = 0; u < TILE_LOADS; ++u) {
      const long v = (long)tile * tile_vectors + u * group + lid;
      vector_rows(next[u], RULE_ARGS, rows + u * VEC, &memo_value, &memo_row);
      if (v >= count) {
#pragma unroll
        for (int k = 0; k < VEC; ++k)
          rows[u * VEC + k] = NO_INDEX;
      }
    }
    load_tile(in, first_vector, count, tile + get_num_groups(0), tile_vectors, next);
    for (uint i = lid; i < buckets * SORT_COLUMNS; i += group)
      cursor[i] = 0;
    if (lid == 0) leader = rows[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    bool same = true;
#pragma unroll
    for (int k = 0; k < TILE_LOADS * VEC; ++k)
      same &= rows[k] == leader;
    // A whole tile of one row (all-equal data, long runs) is one global add; its sort then sorts
    // nothing.
    if (group_all(same, &scratch)) {
      if (lid == 0) add_count(counts, slot_of_row(leader, slot_bins), tile_values);
#pragma unroll
      for (int k = 0; k < TILE_LOADS * VEC; ++k)
        rows[k] = NO_INDEX;
    }
#pragma unroll
    for (int k = 0; k < TILE_LOADS * VEC; ++k)
      if (rows[k] != NO_INDEX) local_increment(cursor, (rows[k] >> shift) * SORT_COLUMNS + column);
    barrier(CLK_LOCAL_MEM_FENCE);
    // Each bucket's columns take their places within the bucket, then the buckets theirs.
    uint in_bucket = 0;
    if (lid < buckets) {
      for (uint c = 0; c < SORT_COLUMNS; ++c) {
        const uint v = cursor[lid * SORT_COLUMNS + c];
        cursor[lid * SORT_COLUMNS + c] = in_bucket;
        in_bucket += v;
      }
      bucket_start[lid] = in_bucket;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint total = local_exclusive_scan(bucket_start, buckets, parts);
    if (lid < buckets) {
      const uint start = bucket_start[lid];
      for (uint c = 0; c < SORT_COLUMNS; ++c)
        cursor[lid * SORT_COLUMNS + c] += start;
      meta[(long)lid * tiles + tile] = start | in_bucket << 16;
      if (in_bucket) atomic_add(totals + lid, in_bucket);
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // the places are set before values take them
    // The places first, then the stores: the atomics go out back to back.
    uint places[TILE_LOADS * VEC];
#pragma unroll
    for (int k = 0; k < TILE_LOADS * VEC; ++k)
      places[k] = rows[k] != NO_INDEX
                      ? word_add(cursor, (rows[k] >> shift) * SORT_COLUMNS + column, 1)
                      : NO_INDEX;
#pragma unroll
    for (int k = 0; k < TILE_LOADS * VEC; ++k)
      if (places[k] != NO_INDEX) staging[places[k]] = rows[k] & low;
    barrier(CLK_LOCAL_MEM_FENCE);
    // Whole 16-byte vectors: past `total` within the tile's stretch, their rows are never read.
    __global ushort* out = sorted + (long)tile * tile_values;
    for (uint i = lid; i < (total + 7) / 8; i += group)
      vstore8(vload8(i, staging), i, out);
    barrier(CLK_LOCAL_MEM_FENCE);  // `staging`, `cursor` and `leader` are written again
  }
}

// Counts the rows of one stretch's 16-byte vector `raw` (rows [at, at + 8) of the chunk) that
// lie in [first, last).
void count_vector_rows(__local uint* hist, uint4 raw, uint at, uint first, uint last) {
  const uint words[4] = {raw.x, raw.y, raw.z, raw.w};
  const uint from = first > at ? min(8u, first - at) : 0u;
  const uint to = last > at ? min(8u, last - at) : 0u;
  if (from == 0 && to == 8) {
#pragma unroll
    for (uint k = 0; k < 8; ++k)
      local_increment(hist, words[k / 2] >> (16 * (k % 2)) & 0xFFFFu);
  } else {
#pragma unroll
    for (uint k = 0; k < 8; ++k)
      if (k >= from && k < to) local_increment(hist, words[k / 2] >> (16 * (k % 2)) & 0xFFFFu);
  }
}

// `totals` holds the buckets' totals.
__kernel void count_buckets(__global const ushort* sorted, __global const uint* meta,
                            __global const uint* totals, uint tiles, uint tile_values, uint shift,
                            uint buckets, ulong target, uint counted, __local uint* hist,
                            __global ulong* counts) {
  __local uint first_item[MAX_BUCKETS + 1];  // a bucket's first item; then all items
  __local uint parts[33];
  const uint lid = get_local_id(0), group = get_local_size(0), index = get_group_id(0);
  const uint lane = lid % 32, team = lid / 32, teams = group / 32;
  const uint bucket_rows = 1u << shift, slot_bins = counted - 3;
  __global const uint4* vectors = (__global const uint4*)sorted;
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
  __global const uint* starts = meta + (long)bucket * tiles;
  // A team takes 32 tiles at a time, ITEM_TILES_AHEAD stretches loaded before any is counted;
  // rows of the chunk are fewer than 2^32 (bucket_chunk_mib ≤ 4096 of 2-byte rows).
  for (uint t0 = begin + team * 32; t0 < end; t0 += teams * 32) {
    const uint in_team = min(32u, end - t0);
    for (uint j0 = 0; j0 < in_team; j0 += ITEM_TILES_AHEAD) {
      uint4 raw[ITEM_TILES_AHEAD];
      uint first[ITEM_TILES_AHEAD], last[ITEM_TILES_AHEAD];
#pragma unroll
      for (uint a = 0; a < ITEM_TILES_AHEAD; ++a) {
        const uint m = j0 + a < in_team ? starts[t0 + j0 + a] : 0u;
        first[a] = (t0 + j0 + a) * tile_values + (m & 0xFFFFu);
        last[a] = first[a] + (m >> 16);
        const uint at = (first[a] & ~7u) + lane * 8;
        raw[a] = at < last[a] ? vectors[at / 8] : (uint4)(0);
      }
#pragma unroll
      for (uint a = 0; a < ITEM_TILES_AHEAD; ++a) {
        // A stretch longer than one window of 256 rows loads the next window before it counts
        // this one.
        for (uint window = first[a] & ~7u; window < last[a]; window += 256) {
          const uint at = window + lane * 8;
          const uint4 now = raw[a];
          if (window + 256 < last[a])
            raw[a] = at + 256 < last[a] ? vectors[at / 8 + 32] : (uint4)(0);
          if (at < last[a]) count_vector_rows(hist, now, at, first[a], last[a]);
        }
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint row0 = bucket << shift;
  for (uint r = lid; index < items && r < bucket_rows && row0 + r < counted; r += group)
    if (hist[r]) add_count(counts, slot_of_row(row0 + r, slot_bins), hist[r]);
}
