#!/usr/bin/env bash
# Runs the collector's libFuzzer target for a bounded time on a COPY of the seed corpus
# (new inputs go to the copy; the repository's corpus is never written). Fails on any
# finding -- a crash, a sanitizer report, a leak, the round-trip property (fuzz_decode.hpp)
# -- and keeps the reproducer in FINDINGS_DIR.
#   fuzz_run.sh FUZZER SEED_CORPUS SECONDS FINDINGS_DIR
set -u
fuzzer=$(realpath "$1") seeds=$2 seconds=$3 findings=$(realpath -m "$4")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/corpus" "$tmp/artifacts"
cp "$seeds"/* "$tmp/corpus/"
cd "$tmp"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$tmp/artifacts/" "$tmp/corpus" >fuzz.log 2>&1
rc=$?
grep -E '^(stat::number_of_executed_units|stat::new_units_added|Done )' fuzz.log
if [ $rc != 0 ] || [ -n "$(ls artifacts)" ]; then
  mkdir -p "$findings"
  cp artifacts/* "$findings/" 2>/dev/null
  tail -n 40 fuzz.log
  echo "FAIL libFuzzer exited with $rc; reproducers in $findings (run: $fuzzer FILE)"
  exit 1
fi
if ! grep -Eq '^Done [1-9][0-9]* runs' fuzz.log; then
  tail -n 20 fuzz.log
  echo "FAIL libFuzzer did not run"
  exit 1
fi
echo "ok   no finding in ${seconds} s"
