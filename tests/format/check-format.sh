#!/bin/sh
# usage: check-format.sh CLANG_FORMAT REPO_ROOT [--fix]
#
# Checks every .c and .h of the project against .clang-format; with --fix,
# rewrites them instead (`make format`). Fuzz corpora hold inputs, not code, so
# they are skipped, as are build trees configured inside the source tree.
set -eu

clang_format=$1
cd "$2"
mode=${3:-}

dirs=
for dir in grammar frontend sema lower runtime tests; do
  [ -d "$dir" ] && dirs="$dirs $dir"
done

# shellcheck disable=SC2086 # $dirs is a list of fixed names without spaces
files=$(find $dirs \
  \( -path tests/fuzz/corpus -o -name build -o -name 'build-*' \) -prune \
  -o -type f \( -name '*.c' -o -name '*.h' \) -print | sort)

if [ -z "$files" ]; then
  echo "check-format: no C files found"
  exit 0
fi

# shellcheck disable=SC2086 # our file names contain no spaces
if [ "$mode" = --fix ]; then
  "$clang_format" -i $files
else
  "$clang_format" --dry-run --Werror $files
fi
echo "check-format: $(echo "$files" | wc -l) files ${mode:+re}formatted"
