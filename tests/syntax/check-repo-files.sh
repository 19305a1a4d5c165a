#!/bin/bash
# usage: check-repo-files.sh BIN SRC
#
# Runs `flyc check` on every .fly file of the source tree SRC, with SRC/stdlib
# as the standard library, using the flyc in BIN. In a git checkout the files
# are those git tracks plus the untracked ones it does not ignore; elsewhere
# (a source archive) every .fly under SRC outside build trees. Intentionally
# invalid inputs live in .test files, so every .fly file must pass, except the
# fuzz corpora (tests/fuzz/corpus), which hold fuzzer inputs, not programs,
# and are skipped as the format check skips them. A file written for one
# target names it in a line `// TARGET: sm_90a` and is checked for it.
# Prints each failure with its diagnostics; fails when any file fails, and
# when there is no file at all (the search itself must be broken then).
set -eu

if [ $# -ne 2 ]; then
  echo "usage: $0 BIN SRC" >&2
  exit 2
fi
flyc=$1/flyc
src=$2

if [ ! -x "$flyc" ]; then
  echo "check-repo-files: $flyc is not an executable" >&2
  exit 2
fi

files=()
if command -v git >/dev/null 2>&1 &&
   [ "$(git -C "$src" rev-parse --is-inside-work-tree 2>/dev/null)" = true ]; then
  while IFS= read -r -d '' f; do
    # A tracked file deleted from the work tree is not there to check.
    if [ -f "$src/$f" ]; then
      files+=("$f")
    fi
  done < <(git -C "$src" ls-files -z --cached --others --exclude-standard -- '*.fly' \
             ':(exclude)tests/fuzz/corpus')
else
  while IFS= read -r -d '' f; do
    files+=("${f#"$src"/}")
  done < <(find "$src" \( -name .git -o -name build -o -name 'build-*' \
             -o -path "$src/tests/fuzz/corpus" \) -prune \
             -o -type f -name '*.fly' -print0)
fi

if [ ${#files[@]} -eq 0 ]; then
  echo "check-repo-files: no .fly files found in $src" >&2
  exit 1
fi

# Sorted and without duplicates (git lists a file once per stage when a merge
# is in progress).
mapfile -d '' files < <(printf '%s\0' "${files[@]}" | sort -zu)

failed=0
for f in "${files[@]}"; do
  # A file for one target says so in a line `// TARGET: sm_90a` (wgmma).
  target=$(sed -n 's|^// TARGET: *\([a-z0-9_]*\).*|\1|p' "$src/$f" | head -n 1)
  if ! out=$("$flyc" check --color=never --stdlib="$src/stdlib" ${target:+--target="$target"} \
               "$src/$f" 2>&1); then
    echo "FAIL: $f"
    printf '%s\n' "$out"
    failed=$((failed + 1))
  fi
done

if [ "$failed" -ne 0 ]; then
  echo "check-repo-files: $failed of ${#files[@]} .fly files failed flyc check"
  exit 1
fi
echo "check-repo-files: all ${#files[@]} .fly files pass flyc check"
