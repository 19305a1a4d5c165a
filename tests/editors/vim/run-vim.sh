#!/bin/sh
# usage: run-vim.sh VIM TEST.vim RUNTIME SOURCE FLYC WORKDIR
#
# Runs the Test_* functions of TEST.vim in a headless Vim (-es: no terminal,
# no prompts), with only RUNTIME (editors/vim) and Vim's own runtime in
# 'runtimepath', neither vimrc nor swap file nor viminfo. harness.vim writes
# one line per test to WORKDIR/NAME.log; this prints it and fails unless Vim
# exits with 0 and the log ends with the harness's PASS line, so that a Vim
# that stops early (an error outside a test, a crash) fails too. SOURCE is
# the source tree (examples/...), FLYC the compiler; the tests write only
# under WORKDIR, in the build tree.
set -eu

if [ $# -ne 6 ]; then
  echo "usage: $0 VIM TEST.vim RUNTIME SOURCE FLYC WORKDIR" >&2
  exit 2
fi
vim=$1 test=$2 runtime=$3 source=$4 flyc=$5 work=$6
here=$(cd "$(dirname "$0")" && pwd)
name=$(basename "$test" .vim)
log=$work/$name.log

mkdir -p "$work/$name"
rm -f "$log"
status=0
(cd "$work/$name" &&
   FLY_VIM_TEST=$test FLY_VIM_RUNTIME=$runtime FLY_VIM_LOG=$log \
   FLY_SOURCE_DIR=$source FLYC=$flyc FLY_VIM_WORK=$work/$name \
   "$vim" -Nu NONE -i NONE -n -es -S "$here/harness.vim" </dev/null) || status=$?

if [ -f "$log" ]; then
  cat "$log"
else
  echo "$name: Vim wrote no log ($log)"
fi
if [ "$status" -ne 0 ] || [ ! -f "$log" ] || ! tail -n 1 "$log" | grep -q '^PASS'; then
  echo "$name: FAILED (Vim exit status $status)"
  exit 1
fi
