#!/bin/sh
# usage: parse-throughput.sh BIN_DIR [LINES]
#
# Measures how fast `flyc parse` reads Fly source. Generates a file of LINES
# lines (default 1000000) of realistic code: kernels with their launch blocks
# and helper functions, with lets, layouts and tensor types, calls, loops with
# carried values, if/else, and comments. Checks that it parses without
# errors, then times five runs of BIN_DIR/flyc parse on it and prints the
# file's size and the best and median throughput in lines and MB
# (10^6 bytes) per second. Set RUNS to time a different number of runs, and
# KEEP=FILE to keep the generated source (to profile it, for instance).
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 BIN_DIR [LINES]" >&2
  exit 2
fi
flyc=$1/flyc
lines=${2:-1000000}
runs=${RUNS:-5}
if [ ! -x "$flyc" ]; then
  echo "parse-throughput: no flyc in $1 (build first: make)" >&2
  exit 2
fi
case $lines in
'' | *[!0-9]*)
  echo "parse-throughput: LINES must be a number, not '$lines'" >&2
  exit 2
  ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
src=$tmp/bench.fly

# One block of code per value of N; whole blocks while they fit, then
# comment lines up to exactly LINES.
awk -v lines="$lines" '
BEGIN {
  n = 0
  t[n++] = "// ---- block @: a row reduction, its launch, and a tiled copy ----"
  t[n++] = "import std.reduce;"
  t[n++] = ""
  t[n++] = "const BLOCK_@ = 128;"
  t[n++] = "const VEC_@: int = 4;"
  t[n++] = "const TILE_@ = (BLOCK_@, VEC_@):(VEC_@, 1);"
  t[n++] = "static_assert(BLOCK_@ % 32 == 0, \"BLOCK_@ must be a whole number of warps\");"
  t[n++] = ""
  t[n++] = "/* Combines two partial results; mode picks the operation at compile"
  t[n++] = "   time, so only one branch is ever compiled. */"
  t[n++] = "fn combine_@(a: f32, b: f32, const mode: int = 0) -> f32 {"
  t[n++] = "    if const mode == 0 {"
  t[n++] = "        a + b"
  t[n++] = "    } else if mode == 1 {"
  t[n++] = "        max(a, b)"
  t[n++] = "    } else {"
  t[n++] = "        a * b + 0.5e-3"
  t[n++] = "    }"
  t[n++] = "}"
  t[n++] = ""
  t[n++] = "kernel reduce_@(x: tensor<f32, (?, ?):(?, 1)>, y: tensor<f32, (?,):(1,)>,"
  t[n++] = "                const VEC: int = 4) {"
  t[n++] = "    let row = block_idx.x;"
  t[n++] = "    let tid = thread_idx.x;"
  t[n++] = "    let layout = (BLOCK_@, VEC):(VEC, 1);        // thread-major"
  t[n++] = "    let tile = zipped_divide(x[row, _], (BLOCK_@ * VEC,))[_, 0];"
  t[n++] = "    let frag: rmem<f32, (4,):(1,)> = tile.partition(layout, tid);"
  t[n++] = "    for k in range(0, size(frag)) carry (acc = 0.0, n = 0) {"
  t[n++] = "        let v = frag[k] as f32;"
  t[n++] = "        let w = if v > 0.0 { v } else { -v * 0.5 };"
  t[n++] = "        yield (combine_@(acc, w, mode = 0), n + 1);"
  t[n++] = "    }"
  t[n++] = "    let total = block_reduce(acc, op = \"sum\", width = 0x20);"
  t[n++] = "    if tid == 0 && total != 0.0 {"
  t[n++] = "        store(y[row], total / (n as f32));"
  t[n++] = "    } else {"
  t[n++] = "        barrier();"
  t[n++] = "    }"
  t[n++] = "}"
  t[n++] = ""
  t[n++] = "launch reduce_@ {"
  t[n++] = "    let (rows, _) = shape(x);"
  t[n++] = "    grid = (rows, 1, 1);"
  t[n++] = "    block = (BLOCK_@, 1, 1);"
  t[n++] = "    shared = BLOCK_@ * 4;"
  t[n++] = "}"
  t[n++] = ""
  t[n++] = "kernel copy_@(src: tensor<f16, (?, ?):(?, 1)>, dst: tensor<f16, (?, ?):(?, 1)>) {"
  t[n++] = "    let smem_tile: smem<f16, (64, 64):(64, 1)> = alloc(align = 128);"
  t[n++] = "    let gS = local_tile(src, (64, 64), (block_idx.y, block_idx.x));"
  t[n++] = "    let gD = local_tile(dst, (64, 64), (block_idx.y, block_idx.x));"
  t[n++] = "    let v: vec<8, f16> = gS.load(thread_idx.x * 8);"
  t[n++] = "    copy(v, smem_tile[thread_idx.x / 8, (thread_idx.x % 8) * 8]);"
  t[n++] = "    barrier();"
  t[n++] = "    gD.store(thread_idx.x * 8, smem_tile.load(thread_idx.x * 8) << 1 | 0b1);"
  t[n++] = "}"
  t[n++] = ""
  for (b = 0; written + n <= lines; b++) {
    for (i = 0; i < n; i++) {
      line = t[i]
      gsub(/@/, b, line)
      print line
    }
    written += n
  }
  for (; written < lines; written++)
    print "// filler to reach the requested number of lines"
}' >"$src"

if [ -n "${KEEP:-}" ]; then
  cp "$src" "$KEEP"
fi

bytes=$(wc -c <"$src" | tr -d ' ')
count=$(wc -l <"$src" | tr -d ' ')

if ! "$flyc" parse "$src" >/dev/null 2>"$tmp/errors"; then
  echo "parse-throughput: the generated file does not parse cleanly:" >&2
  head -20 "$tmp/errors" >&2
  exit 1
fi

now() { date +%s%N; }
i=0
: >"$tmp/times"
while [ "$i" -lt "$runs" ]; do
  start=$(now)
  "$flyc" parse "$src" >/dev/null
  end=$(now)
  echo $((end - start)) >>"$tmp/times"
  i=$((i + 1))
done

sort -n "$tmp/times" | awk -v lines="$count" -v bytes="$bytes" -v runs="$runs" '
{ t[NR] = $1 / 1e9 }
END {
  best = t[1]
  median = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
  printf "file:    %d lines, %d bytes (%.1f MB)\n", lines, bytes, bytes / 1e6
  printf "runs:    %d of flyc parse\n", runs
  printf "best:    %.3f s  %12.0f lines/s  %8.1f MB/s\n", best, lines / best, bytes / 1e6 / best
  printf "median:  %.3f s  %12.0f lines/s  %8.1f MB/s\n", median, lines / median,
         bytes / 1e6 / median
}'
