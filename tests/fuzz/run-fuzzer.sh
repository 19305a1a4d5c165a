#!/bin/sh
# usage: run-fuzzer.sh FUZZER CORPUS WORKDIR [libFuzzer options...]
#
# Runs FUZZER on a fresh copy of the committed CORPUS made in WORKDIR. libFuzzer
# adds every new interesting input to its corpus directory, and a test run must
# not change the source tree; crash-*, leak-* and timeout-* reproducers land in
# WORKDIR too. Exits with the fuzzer's status: 0 when it found nothing.
set -eu

fuzzer=$1
corpus=$2
workdir=$3
shift 3

rm -rf "$workdir"
mkdir -p "$workdir/corpus"
if [ -d "$corpus" ]; then
  cp -R "$corpus/." "$workdir/corpus/"
else
  echo "run-fuzzer: no seed corpus at $corpus; starting from an empty one"
fi

exec "$fuzzer" -artifact_prefix="$workdir/" "$@" "$workdir/corpus"
