#!/bin/sh
# One CI run of a libFuzzer target: a fixed seed and a fixed number of executions, starting
# from the checked-in corpus. New inputs go to a scratch corpus in the build tree (never the
# source tree), crash reproducers next to it. Any crash, leak, sanitizer report or failed check
# exits non-zero, which fails the test.
#   run-fuzzer.sh FUZZER CORPUS-DIR WORK-DIR RUNS [extra libFuzzer flags]
set -eu
fuzzer=$1 corpus=$2 work=$3 runs=$4
shift 4
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
echo "$(basename "$fuzzer"): -seed=${MESHSYNC_FUZZ_SEED:-1} -runs=$runs over $corpus"
exec "$fuzzer" -seed="${MESHSYNC_FUZZ_SEED:-1}" -runs="$runs" -max_len=65536 \
  -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 -error_exitcode=1 -timeout_exitcode=1 \
  -artifact_prefix="$work/artifacts/" "$@" "$work/corpus" "$corpus"
