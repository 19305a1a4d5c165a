#!/bin/sh
# tests/gpu/flyc_run_checks.sh — `flyc run` on a real NVIDIA GPU: results
# checked against NumPy, and the bandwidth of the vector add measured.
#
# usage: tests/gpu/flyc_run_checks.sh ARTIFACTS
#
# ARTIFACTS holds a flyc binary (ARTIFACTS/flyc or ARTIFACTS/bin/flyc) and
# the examples compiled for the GPU, e.g. for an H100:
#   flyc compile examples/01-vector-add.fly --emit=bundle --target=sm_90 \
#       -o ARTIFACTS/01-vector-add.flyb
# and likewise 03-tiled-mma.flyb and 05-row-softmax.flyb (checked when
# present). Only bundles are run: the machine needs no MLIR, only the GPU
# driver and python3 with numpy.
#
# Each check prints "ok NAME" or "FAIL NAME", and the bandwidth "bench
# flyc_run_vadd_gbs VALUE GB/s", as tests/gpu/run.py (which runs this with
# ARTIFACTS = build/gpu) collects them. Exit status: 0 when every check
# passes, 1 when one fails, 77 (the usual "skipped") when there is no GPU.
set -eu

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
  echo "usage: $0 ARTIFACTS" >&2
  exit 2
fi
ART=$(cd "$1" && pwd)
FLYC=$ART/flyc
[ -x "$FLYC" ] || FLYC=$ART/bin/flyc
if [ ! -x "$FLYC" ]; then
  echo "error: no flyc in $ART or $ART/bin" >&2
  exit 1
fi
VADD=$ART/01-vector-add.flyb
[ -f "$VADD" ] || { echo "error: no $VADD" >&2; exit 1; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
failures=0

# One line per check, "ok ..." or "FAIL ...", as tests/gpu/run.py reads them.
pass() { echo "ok $1"; }
fail() {
  echo "FAIL $1"
  failures=$((failures + 1))
}

# No GPU: skip. flyc itself says so, after checking everything else.
N=1048576
if ! "$FLYC" run "$VADD" A=zeros:f32:$N B=zeros:f32:$N C=zeros:f32:$N >probe.out 2>&1; then
  if grep -q 'no GPU' probe.out; then
    cat probe.out
    echo "skipped: no GPU"
    exit 77
  fi
  cat probe.out >&2
  fail "a vector add of zeros"
fi

python3 -c 'import numpy' || { echo "error: python3 has no numpy" >&2; exit 1; }

# Runs flyc run with the arguments given, saying what it ran; false when
# flyc fails.
flyc_run() {
  echo "+ flyc run $*"
  "$FLYC" run "$@"
}

# compare.py EXPR: EXPR is a Python expression over the arrays of the .npy
# files here (a.npy is `a`), numpy as np; it must be true.
cat >compare.py <<'EOF'
import glob, os, sys
import numpy as np
arrays = {os.path.splitext(f)[0]: np.load(f) for f in glob.glob("*.npy")}
ok = bool(eval(sys.argv[1], {"np": np}, arrays))
if not ok:
    print("false:", sys.argv[1], file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
check() { python3 compare.py "$1"; }

# 1. The vector add on inputs made by NumPy: C must be A + B exactly.
python3 -c "
import numpy as np
rng = np.random.default_rng(1)
np.save('a.npy', rng.standard_normal($N, dtype=np.float32))
np.save('b.npy', rng.standard_normal($N, dtype=np.float32))"
if flyc_run "$VADD" A=@a.npy B=@b.npy C=zeros:f32:$N --output C=c.npy &&
  check 'c.dtype == np.float32 and c.shape == a.shape and np.array_equal(c, a + b)'; then
  pass "vector add of .npy inputs"
else
  fail "vector add of .npy inputs"
fi
rm -f ./*.npy

# 2. Generated inputs, written back with the result: C = A + B again, and
# the inputs look like their distributions.
if flyc_run "$VADD" A=randn:f32:$N B=rand:f32:$N C=ones:f32:$N --seed 7 \
  --output A=a.npy --output B=b.npy --output C=c.npy &&
  check 'np.array_equal(c, a + b) and abs(a.mean()) < 0.01 and abs(a.std() - 1) < 0.01 and b.min() >= 0 and b.max() < 1 and abs(b.mean() - 0.5) < 0.01'; then
  pass "vector add of generated inputs"
else
  fail "vector add of generated inputs"
fi

# 3. --seed reproduces the arguments; without it they differ.
mv a.npy first.npy
if flyc_run "$VADD" A=randn:f32:$N B=rand:f32:$N C=zeros:f32:$N --seed 7 --output A=a.npy &&
  check 'np.array_equal(a, first)' &&
  flyc_run "$VADD" A=randn:f32:$N B=rand:f32:$N C=zeros:f32:$N --output A=a.npy &&
  check 'not np.array_equal(a, first)'; then
  pass "--seed"
else
  fail "--seed"
fi
rm -f ./*.npy

# 4. An argument the kernel refuses, and a GPU that is not there, fail
# before anything is written.
if flyc_run "$VADD" A=randn:f64:$N B=randn:f32:$N C=zeros:f32:$N --output C=c.npy 2>err.txt ||
  [ -e c.npy ] || ! grep -q "argument 'A': the kernel takes f32 elements, not f64" err.txt; then
  fail "a refused argument"
else
  cat err.txt
  pass "a refused argument"
fi
if flyc_run "$VADD" A=randn:f32:$N B=randn:f32:$N C=zeros:f32:$N --device 99 --output C=c.npy \
  2>err.txt || [ -e c.npy ] || ! grep -q "no GPU: no GPU 99" err.txt; then
  fail "--device 99"
else
  cat err.txt
  pass "--device 99"
fi

# 5. The tiled MMA: f16 inputs rounded on the host, f32 accumulation.
MMA=$ART/03-tiled-mma.flyb
if [ -f "$MMA" ]; then
  if flyc_run "$MMA" A=randn:f16:256x512 B=randn:f16:128x512 C=zeros:f32:256x128 \
    --output A=a.npy --output B=b.npy --output C=c.npy &&
    check 'a.dtype == np.float16 and c.shape == (256, 128) and np.allclose(c, a.astype(np.float32) @ b.astype(np.float32).T, rtol=1e-3, atol=1e-3)'; then
    pass "tiled MMA"
  else
    fail "tiled MMA"
  fi
  rm -f ./*.npy
  # --flops, and --grid and --block given as the launch rule has them.
  if flyc_run "$MMA" A=randn:f16:4096x4096 B=randn:f16:4096x4096 C=zeros:f32:4096x4096 \
    --grid 64,64 --block 128 --bench 20 --flops '2*4096*4096*4096' >bench.txt; then
    cat bench.txt
    if grep -q 'grid (64, 64, 1), block (128, 1, 1)' bench.txt && grep -q 'TFLOP/s$' bench.txt; then
      pass "--flops, --grid, --block"
    else
      fail "--flops, --grid, --block"
    fi
  else
    fail "--flops, --grid, --block"
  fi
fi

# 6. The row softmax: each row of Y is softmax of X's.
SOFTMAX=$ART/05-row-softmax.flyb
if [ -f "$SOFTMAX" ]; then
  if flyc_run "$SOFTMAX" X=randn:f32:64x1000 Y=zeros:f32:64x1000 --output X=x.npy --output Y=y.npy &&
    check 'np.allclose(y, np.exp(x - x.max(1, keepdims=True)) / np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True), rtol=1e-5, atol=1e-6)'; then
    pass "row softmax"
  else
    fail "row softmax"
  fi
  rm -f ./*.npy
fi

# 7. The bandwidth of the vector add on 2^28 floats (1 GiB per tensor):
# rand is quicker to make on the host than randn.
BIG=268435456
if flyc_run "$VADD" A=rand:f32:$BIG B=rand:f32:$BIG C=zeros:f32:$BIG --bench 100 >bench.txt; then
  cat bench.txt
  if grep -q '^bench: 100 launches, median .* us, min .* us, .* GB/s (3221225472 bytes)$' bench.txt; then
    pass "--bench 100 on 2^28 elements"
    # The figures for run.py's table: "bench NAME VALUE UNIT".
    sed -n 's/^bench: .*median \([0-9.]*\) us.* \([0-9.]*\) GB\/s.*/bench flyc_run_vadd_us \1 us\
bench flyc_run_vadd_gbs \2 GB\/s/p' bench.txt
  else
    fail "--bench prints median, min and GB/s"
  fi
else
  fail "--bench 100 on 2^28 elements"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all checks passed"
