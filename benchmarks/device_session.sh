#!/bin/bash
# Everything a session with a lent GPU runs there, in one command: the
# environment, the `gpu` tests (tests/gpu), the GPU benchmarks.
# Each step has its own time limit so that a slow one leaves the rest their turn; all the
# steps' defaults add up to about 740 s, more than one call's limit: split them over two calls
# with STEPS (`run(command="STEPS='tests boosting' bash ...", timeout_s=600, carry=[".whl"])`).
# The `gpu` tests compile every kernel from cold caches in each worker: hence a worker a core.
# The log and a tarball of this run's results land in $OUT.
export PYTHONUNBUFFERED=1 OUT=${OUT:-/tmp/out} NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=0
mkdir -p "$OUT"
log="$OUT/session.log"
started=$(mktemp)  # results newer than this come back
step() { echo "=== $(date +%T) $*" | tee -a "$log"; }

# The image's numba-cuda still names np.row_stack, which its numpy 2.5 dropped.
mkdir -p /tmp/compat
echo 'import numpy; numpy.__dict__.setdefault("row_stack", numpy.vstack)' >/tmp/compat/sitecustomize.py
export PYTHONPATH=/tmp/compat${PYTHONPATH:+:$PYTHONPATH}

step environment
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv 2>&1 | tee -a "$log"
python3 -c "import numpy, numba, cupy, sklearn; from numba import cuda; import numba_cuda
print('numpy', numpy.__version__, 'numba', numba.__version__, 'numba-cuda', numba_cuda.__version__,
      'cupy', cupy.__version__, 'sklearn', sklearn.__version__, 'cuda', cuda.is_available())" 2>&1 | tee -a "$log"

# The package maps gpuforest.kernels to kernels/; without network an editable
# install needs the image's setuptools, else a link gives the same layout.
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >>"$log" 2>&1 \
    || { ln -sfn ../kernels gpuforest/kernels; export PYTHONPATH=$PYTHONPATH:$PWD; step "pip failed: using a link"; }
python3 -c "import gpuforest, gpuforest.kernels.cuda; print('gpuforest', gpuforest.__version__)" 2>&1 | tee -a "$log"

# XGBoost (the GPU peer) from the wheels that travel in .whl/ (its manylinux wheel carries its CUDA
# build; see the device README's wheel notes): the benchmarks then run it with device="cuda".
peers=""
if ls .whl/xgboost-*.whl >/dev/null 2>&1 && python3 -m pip install -q --no-index --no-deps --no-compile \
        --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >>"$log" 2>&1; then
    export PYTHONPATH=$PYTHONPATH:/tmp/site
    python3 -c "import numpy, xgboost; X = numpy.random.rand(1000, 4); xgboost.XGBClassifier(device='cuda', n_estimators=2).fit(X, X[:, 0] > 0.5)
print('xgboost', xgboost.__version__, 'fits on the GPU')" 2>&1 | tee -a "$log" && peers=xgboost
fi

card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
# STEPS picks the steps and their order (default: all); TESTS_K a -k expression of the tests to run;
# FOREST_DEVICES the forest benchmark's devices.
for bench in ${STEPS:-tests phases gpu forest boosting contributions}; do
    case $bench in
    tests)
        step gpu tests
        GPUFOREST_REAL_CUDA=1 GPUFOREST_FAILURES="$OUT/gpu_test_failures.txt" timeout "${TESTS_S:-240}" python3 -m pytest -m gpu tests/gpu -v --tb=short -p no:cacheprovider \
            -n "${TESTS_WORKERS:-16}" --durations=5 ${TESTS_K:+-k "$TESTS_K"} 2>&1 | tee -a "$log" ;;
    phases)
        step gpu_phases
        timeout "${PHASES_S:-120}" python3 benchmarks/gpu_phases.py --output "benchmarks/results/gpu_phases_${card}" \
            2>&1 | tee -a "$log" ;;
    gpu)
        step bench_gpu
        timeout "${BENCH_GPU_S:-100}" python3 benchmarks/bench_gpu.py --sizes 1000000 10000000 2>&1 | tee -a "$log" ;;
    forest)
        for device in ${FOREST_DEVICES:-cuda}; do
            step "bench_forest $device"
            timeout "${BENCH_FOREST_S:-100}" python3 benchmarks/bench_forest.py --device "$device" \
                --libraries gpuforest $([ "$device" = cuda ] && echo $peers) --output-name "forest_${device}_${card}_1000000x28" 2>&1 | tee -a "$log"
        done ;;
    boosting)
        step "bench_boosting cuda"
        timeout "${BENCH_BOOSTING_S:-100}" python3 benchmarks/bench_boosting.py --device cuda \
            --libraries gpuforest ${BOOSTING_PEERS-scikit-learn} $peers --output-name "boosting_cuda_${card}_1000000x28" 2>&1 | tee -a "$log" ;;
    contributions)
        step "bench_contributions cuda"
        timeout "${CONTRIBUTIONS_S:-80}" python3 benchmarks/bench_contributions.py --device cuda \
            $([ -n "$peers" ] && echo --gpu) --output "contributions_cuda_${card}_100000x28" 2>&1 | tee -a "$log" ;;
    esac
done

step done
# Only this session's results, in one file (at most 8 files come back).
find benchmarks/results -type f -newer "$started" | tar czf "$OUT/results.tgz" -T -
ls "$OUT"
