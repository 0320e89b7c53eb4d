#!/usr/bin/env bash
# The GPU suite in one call, for a machine with an NVIDIA GPU and no package registry: sets up
# the OpenCL ICD loader from carried .deb files, then runs the stages named on the command line
# (default: info tests sanitize bench); logs and JSON are packed into $OUT/gpu-suite.tgz, laid
# out as bench/report/make_benchmarks.py reads a machine's folder of bench/results/.
#   BIN   folder with parpat, ranks_scaling and the test binaries (default .carry/bin; BIN.tar.xz
#         is unpacked)
#   BIN_PREVIOUS  a previous build's folder (or .tar.xz): the bench and barrier stages run it too,
#         in the same call, into previous/ (the regression check); GIT_COMMIT / GIT_COMMIT_PREVIOUS name the builds
#   TEST_SHARDS   gtest shards of each test binary run side by side in the tests stage (default 8:
#         NVIDIA OpenCL compiles each tuning's kernels on the host, seconds apiece); the grid
#         barrier tests, whose spins are bounded in time, run alone
#   TEST_LIMIT    seconds each shard of a test binary may run (default 900): the shards that
#         finish in time still report, and the suite goes on to the next binary
#   BENCH_ARGS    arguments of every bench run (default --variant fast; quick covers every variant)
#   DEBS  folder with the OpenCL loader .deb files (default .carry/debs)
#   LIBS  folder of shared libraries the machine may lack, put on LD_LIBRARY_PATH (default
#         .carry/lib: libzip.so.4 for .npz input)
#   OUT   where the archive goes (default ./gpu-out)
#   PREFIX  `cmake --install` of the library for the python stage (default .carry/prefix; a
#         libcudart_static.a in its lib/ stands in for a CUDA toolkit the machine lacks)
#   PYTHON  the interpreter of the python stage (default /opt/torch/.venv/bin/python3, python3)
#   SCALING_ELEMENTS  the scaling stage's float32 elements (default 2^31)
#   PARPAT_NCCL_LIBRARY  NCCL's library when the loader does not find libnccl.so.2 (default: a
#         Python framework's under /opt, when there is one)
#   IO_BACKENDS, IO_LARGE_MIB  the io stage's backends (cuda opencl) and large file (16384 MiB;
#         empty: none)
#   SWEEP a file for the `sweep` stage: lines "name|PARPAT_TUNING value|parpat arguments", each
#         run as one parpat command with those tuning overrides (# starts a comment line;
#         OUTDIR in the arguments stands for the folder that is archived)
set -u
# Never NVLink multicast, here or in any child process.
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
BIN=${BIN:-.carry/bin}
# The binaries may travel packed (tar cJf .carry/bin.tar.xz -C .carry bin) to fit the carry limit.
for bin in "$BIN" ${BIN_PREVIOUS:-}; do
  if [ ! -d "$bin" ] && [ -f "$bin.tar.xz" ]; then
    tar xJf "$bin.tar.xz" -C "$(dirname "$bin")"
  fi
done
PREFIX=${PREFIX:-.carry/prefix}
DEBS=${DEBS:-.carry/debs}
LIBS=${LIBS:-.carry/lib}
[ -d "$LIBS" ] && export LD_LIBRARY_PATH=$PWD/$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# NCCL for the communicators: the system's, else the one a Python framework ships.
if ! ldconfig -p | grep -q libnccl.so.2 && [ -z "${PARPAT_NCCL_LIBRARY:-}" ]; then
  nccl_lib=$(ls /opt/*/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2 \
    /usr/local/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so.2 2>/dev/null | head -1)
  [ -n "$nccl_lib" ] && export PARPAT_NCCL_LIBRARY=$nccl_lib
fi
ARCHIVE_DIR=${OUT:-gpu-out}
OUT=$(mktemp -d /tmp/gpu-suite.XXXXXX)
mkdir -p "$ARCHIVE_DIR"
export PARPAT_CLI=$PWD/$BIN/parpat PARPAT_NUMPY_SCRIPT=$PWD/bench/numpy_baseline.py
export PARPAT_SOURCE_DIR=$PWD  # tests that read the source tree find it here

if ! ldconfig -p | grep -q libOpenCL.so.1 && ls "$DEBS"/ocl-icd-libopencl1_*.deb >/dev/null 2>&1; then
  dpkg -x "$DEBS"/ocl-icd-libopencl1_*.deb /tmp/ocl
  export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
nvidia_cl=$(ls /usr/lib/libnvidia-opencl.so.1 /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 \
  /usr/local/nvidia/lib64/libnvidia-opencl.so.1 2>/dev/null | head -1)
if [ -n "$nvidia_cl" ] && [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
  mkdir -p /etc/OpenCL/vendors
  echo "$nvidia_cl" > /etc/OpenCL/vendors/nvidia.icd
fi

stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(info tests sanitize bench)
python3 - "$OUT/meta.json" "${GIT_COMMIT:-unknown}" "${stages[*]}" "${GIT_COMMIT_PREVIOUS:-}" <<'PY'
import datetime, json, sys
meta = {"date": datetime.date.today().isoformat(), "commit": sys.argv[2],
        "commands": ["scripts/gpu-suite.sh " + sys.argv[3]]}
if sys.argv[4]:
    meta["previous"] = "build " + sys.argv[4]
json.dump(meta, open(sys.argv[1], "w"))
PY
status=0
run() {  # run NAME TIMEOUT COMMAND...: logs to $OUT/NAME.log, records the exit status
  local name=$1 limit=$2
  shift 2
  echo "== $name: $*"
  local start=$SECONDS
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "   exit $rc after $((SECONDS - start)) s"
  [ $rc -ne 0 ] && status=1 && tail -n 15 "$OUT/$name.log"
  tar czf "$ARCHIVE_DIR/gpu-suite.tgz" -C "$OUT" .  # after every step: a cut-off run keeps the rest
  return 0
}

run_shards() {  # run_shards NAME TIMEOUT COMMAND...: TEST_SHARDS gtest shards at once, one log
  local name=$1 limit=$2 shards=${TEST_SHARDS:-8} i rc=0 pids=()
  case $name in *barrier*) shards=1 ;; esac
  shift 2
  echo "== $name ($shards shards): $*"
  local start=$SECONDS
  for ((i = 0; i < shards; i++)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout "$limit" "$@" >"$OUT/$name.shard$i.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { rc=$?; echo "   shard $i: exit $rc"; }
  done
  cat "$OUT/$name".shard*.log >"$OUT/$name.log" && rm "$OUT/$name".shard*.log
  echo "   exit $rc after $((SECONDS - start)) s"
  [ $rc -ne 0 ] && status=1 && grep -E "^\[  FAILED|Failure" "$OUT/$name.log" | head -n 15
  tar czf "$ARCHIVE_DIR/gpu-suite.tgz" -C "$OUT" .
  return 0
}

ocl=$("$BIN/parpat" info --json 2>/dev/null | python3 -c 'import json,sys; d=[x["index"] for x in json.load(sys.stdin)["devices"] if x["backend"]=="opencl" and "NVIDIA" in x["vendor"]]; print(d[0] if d else "")' 2>/dev/null)
for stage in "${stages[@]}"; do
  case $stage in
    info)
      nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee "$OUT/nvidia-smi.log"
      run info 300 "$BIN/parpat" info --measure
      cat "$OUT/info.log"
      "$BIN/parpat" info --measure --json >"$OUT/info.json" 2>/dev/null ;;
    tests)
      for t in ${TEST_BINS:-"$BIN"/test_*}; do
        run_shards "$(basename "$t")" "${TEST_LIMIT:-900}" "$t" --gtest_brief=1 --gtest_filter="${TEST_FILTER:-*}"
        grep -E "PASSED|FAILED|SKIPPED \]" "$OUT/$(basename "$t").log" | tail -4
      done ;;
    sanitize)
      export PARPAT_SANITIZE_RUN=1  # spinning tests shrink so a serialising sanitizer stays bounded
      # The CUDA cases of the parameterised tests, and the bucketed histogram's test, which loops
      # over the GPUs itself (synccheck found a warp reaching a barrier divergent there).
      for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
        for t in ${SANITIZE_BINS:-"$BIN"/test_*}; do
          run "sanitize-$tool-$(basename "$t")" "${SANITIZE_LIMIT:-600}" compute-sanitizer --tool "$tool" --error-exitcode 3 \
            "$t" --gtest_brief=1 --gtest_filter="${SANITIZE_FILTER:-*cuda_0_*:*Bucketed*:-*Beyond*:*Accurate*}"
          tail -n 3 "$OUT/sanitize-$tool-$(basename "$t").log"
        done
      done ;;
    bench)
      mkdir -p "$OUT/previous"
      for p in ${BENCH_PATTERNS:-reduce histogram pairwise}; do
        for b in ${BENCH_BACKENDS:-cuda opencl}; do
          dev=()
          [ "$b" = opencl ] && [ -n "${ocl:-}" ] && dev=(--device "$ocl")
          extra=BENCH_ARGS_${p}_${b}
          run "bench-$p-$b" 900 "$BIN/parpat" bench "$p" --backend "$b" "${dev[@]}" \
            ${BENCH_ARGS:---variant fast} ${!extra:-} --json "$OUT/bench-$p-$b.json" --markdown
          if [ -n "${BIN_PREVIOUS:-}" ]; then
            run "previous-bench-$p-$b" 900 "$BIN_PREVIOUS/parpat" bench "$p" --backend "$b" "${dev[@]}" \
              ${BENCH_ARGS:---variant fast} ${!extra:-} --json "$OUT/previous/bench-$p-$b.json"
          fi
        done
      done ;;
    barrier)
      run barrier-cuda 300 "$BIN/parpat" barrier --backend cuda --stress --json
      cp "$OUT/barrier-cuda.log" "$OUT/barrier-cuda.json"
      if [ -n "${BIN_PREVIOUS:-}" ]; then
        mkdir -p "$OUT/previous"
        run previous-barrier-cuda 300 "$BIN_PREVIOUS/parpat" barrier --backend cuda --stress --json
        cp "$OUT/previous-barrier-cuda.log" "$OUT/previous/barrier-cuda.json"
      fi
      [ -n "$ocl" ] && run barrier-opencl 300 "$BIN/parpat" barrier --backend opencl --device "$ocl" --stress --no-sweep --json
      [ -x "$BIN/jacobi_persistent" ] && run jacobi 120 "$BIN/jacobi_persistent" ;;
    sweep)
      while IFS='|' read -r name tuning args; do
        [ -z "$name" ] || [ "${name:0:1}" = "#" ] && continue
        PARPAT_TUNING="$tuning" run "sweep-$name" 600 "$BIN/parpat" ${args//OUTDIR/$OUT}
      done <"${SWEEP:?the sweep stage needs SWEEP=file}" ;;
    io)
      # The CLI end to end on page-cached files beside numpy (1 GiB), and the streaming rate of a
      # file far larger than a chunk without numpy (its histogram of 16 GiB takes minutes).
      for b in ${IO_BACKENDS:-cuda opencl}; do
        dev=()
        [ "$b" = opencl ] && [ -n "${ocl:-}" ] && dev=(--device "$ocl")
        suffix=$([ "$b" = cuda ] || echo "-$b")
        run "bench-io$suffix" 600 "$BIN/parpat" bench io --backend "$b" "${dev[@]}" \
          --json "$OUT/bench-io$suffix.json"
        cat "$OUT/bench-io$suffix.log"
        [ -n "${IO_LARGE_MIB:-16384}" ] && run "bench-io-large$suffix" 900 "$BIN/parpat" bench io \
          --backend "$b" "${dev[@]}" --io-mib "${IO_LARGE_MIB:-16384}" --io-no-numpy \
          --json "$OUT/bench-io-large$suffix.json" && cat "$OUT/bench-io-large$suffix.log"
      done ;;
    python)
      # The package built here (this machine's Python) against the carried library, its tests
      # with numpy, CuPy and torch inputs, and python -m parpat.bench beside them.
      py=${PYTHON:-$(ls /opt/torch/.venv/bin/python3 2>/dev/null || echo python3)}
      args=(--config-settings=cmake.define.CMAKE_PREFIX_PATH="$PWD/$PREFIX" --config-settings=build-dir=/tmp/parpat-python-build)
      [ -f "$PREFIX/lib/libcudart_static.a" ] &&
        args+=(--config-settings=cmake.define.PARPAT_CUDART_STATIC="$PWD/$PREFIX/lib/libcudart_static.a")
      ocl_lib=$(ls /tmp/ocl/usr/lib/x86_64-linux-gnu/libOpenCL.so.1 \
        /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 2>/dev/null | head -1)
      [ -n "$ocl_lib" ] && args+=(--config-settings=cmake.define.PARPAT_OPENCL_LIBRARY="$ocl_lib")
      export PATH=$(dirname "$py"):$PATH PYTHONPATH=/tmp/parpat-python
      run python-build 600 "$py" -m pip install --no-build-isolation --no-deps --no-index \
        --target /tmp/parpat-python "${args[@]}" .
      cat "$OUT/python-build.log" | tail -5
      run python-tests 900 "$py" -m pytest -q -p no:cacheprovider python/tests
      tail -5 "$OUT/python-tests.log"
      run python-bench 600 "$py" -X faulthandler -m parpat.bench --json "$OUT/bench-python.json"
      cat "$OUT/python-bench.log"
      run python-floor 120 "$py" bench/floor/python_call_floor.py --json "$OUT/python-floor.json"
      cat "$OUT/python-floor.log" ;;
    ranks)
      # The distributed commands on this host against one rank, on a page-cached 1 GiB float32
      # file: --devices over every GPU (the one GPU twice when there is one, which measures the
      # ranks' overhead, not scaling), and CPU ranks under mpirun when the machine has MPI.
      { command -v mpirun && mpirun --version; ldconfig -p | grep -E "libmpi|libnccl"; nvidia-smi -L; } \
        >"$OUT/ranks-probe.log" 2>&1
      cat "$OUT/ranks-probe.log"
      py=${PYTHON:-/opt/torch/.venv/bin/python3}
      [ -x "$py" ] || py=python3
      data=/tmp/ranks-f32.npy a=/tmp/ranks-a.npy b=/tmp/ranks-b.npy
      "$py" -c "import numpy as np; g = np.random.default_rng(1); np.save('$data', g.standard_normal(2**28, dtype=np.float32)); np.save('$a', g.uniform(-1, 1, 2**21).astype(np.float32)); np.save('$b', g.uniform(-1, 1, 2**15).astype(np.float32))"
      gpus=$(nvidia-smi -L | wc -l)
      all=$(seq -s, -f 'cuda:%g' 0 $((gpus - 1)))
      [ "$gpus" -eq 1 ] && all=cuda:0,cuda:0
      mpi=()
      command -v mpirun >/dev/null && mpi=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe --bind-to none)
      k=0
      # Pairwise writes C per way of running (-o), which collect_ranks.py compares with one rank's.
      for args in "reduce --op sum $data" "reduce --op argmax $data" "histogram --bins 1024 --range -4 4 $data" \
                  "histogram --bins 65536 --range -4 4 $data" "pairwise --kernel gaussian --h 0.1 $a $b" \
                  "pairwise --kernel product --brute-force $a $b"; do
        k=$((k + 1))
        cat "$data" >/dev/null
        out() { [[ $args == pairwise* ]] && echo "-o $OUT/ranks-$k-$1.npy"; }
        run "ranks-$k-cuda" 300 "$BIN/parpat" $args $(out cuda) --backend cuda --json
        run "ranks-$k-cuda-devices" 300 "$BIN/parpat" $args $(out cuda-devices) --devices "$all" --json
        [ ${#mpi[@]} -gt 0 ] &&
          run "ranks-$k-cuda-mpi2" 300 "${mpi[@]}" -n 2 "$BIN/parpat" $args $(out cuda-mpi2) --backend cuda --json
        [[ $args == pairwise* ]] && continue  # all-pairs on the host's cores: minutes, not a comparison
        run "ranks-$k-cpu" 300 "$BIN/parpat" $args --backend cpu --json
        run "ranks-$k-cpu-devices" 300 "$BIN/parpat" $args --devices cpu,cpu --json
        [ ${#mpi[@]} -gt 0 ] && for n in 1 2 4; do
          run "ranks-$k-cpu-mpi$n" 300 "${mpi[@]}" -n $n "$BIN/parpat" $args --backend cpu --json
        done
      done
      "$py" bench/report/collect_ranks.py "$OUT" "$OUT/ranks.json"
      rm -f "$OUT"/ranks-*.npy
      for f in "$OUT"/ranks-*.log; do echo "$(basename "$f"): $(head -c 300 "$f")"; done ;;
    scaling)
      # Resident data over every GPU of the host against the first alone (bench/scaling): float32
      # sum and histograms of 2^31 values (SCALING_ELEMENTS) and pairwise (gaussian, all-pairs
      # product), one-shot calls and plans, over threads and NCCL, collective included, with the
      # results' downloads and torch.distributed's all-reduce beside them. One GPU: twice.
      gpus=$(nvidia-smi -L | wc -l)
      all=$(seq -s, -f 'cuda:%g' 0 $((gpus - 1)))
      [ "$gpus" -eq 1 ] && all=cuda:0,cuda:0
      run scaling 600 "$BIN/ranks_scaling" --devices "$all" --elements "${SCALING_ELEMENTS:-2147483648}" \
        --json "$OUT/scaling.json"
      cat "$OUT/scaling.log"
      # The all-reduce's baseline in the same run: torch.distributed, a process per GPU.
      py=${PYTHON:-/opt/torch/.venv/bin/python3}
      [ -x "$py" ] || py=python3
      [ "$gpus" -gt 1 ] && [ -f "$OUT/scaling.json" ] &&
        run scaling-torch 240 "$py" bench/scaling/torch_all_reduce.py --gpus "$gpus" --json "$OUT/scaling.json" &&
        cat "$OUT/scaling-torch.log" ;;
    quick)
      run quick 300 "$BIN/parpat" bench --quick --json "$OUT/quick.json"
      cat "$OUT/quick.log" ;;
    *) echo "unknown stage $stage"; status=1 ;;
  esac
  tar czf "$ARCHIVE_DIR/gpu-suite.tgz" -C "$OUT" .  # after every stage: a cut-off run keeps the rest
done
tar czf "$ARCHIVE_DIR/gpu-suite.tgz" -C "$OUT" .
exit $status
