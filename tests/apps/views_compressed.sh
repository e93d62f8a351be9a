#!/usr/bin/env bash
# Stock ParaView reads compressed runs through the views (docs/file-format.md §4, §7):
# deflate and bitshuffle as installed, lz4 with Debian's serial plugin directory and zfp
# with Rewind's plugin module on HDF5_PLUGIN_PATH. Exit 77 (skipped) without pvpython.
source "$(dirname "$0")/lib.sh" "$@"
command -v pvpython >/dev/null 2>&1 || { echo "SKIPPED: pvpython not found"; exit 77; }
command -v Xvfb >/dev/null 2>&1 || { echo "SKIPPED: Xvfb not found"; exit 77; }
plugins=$(dirname "$rewind")/../lib/hdf5-plugins
steps=(--steps 3 -q --set output.visualisation_every=1)
for c in none deflate lz4 bitshuffle; do
  "$rewind" run "$src/cases/default.toml" --output $c.h5 --monitor $c.csv "${steps[@]}" --set "output.io.compression=\"$c\"" >>log 2>&1
done
"$rewind" run "$src/cases/default.toml" --output zfp.h5 --monitor zfp.csv "${steps[@]}" \
  --set 'output.io.visualisation_compression="zfp"' --set output.io.zfp_accuracy=1e-3 >>log 2>&1
check "runs" "[ -f none.h5 ] && [ -f zfp.h5 ]"
HDF5_PLUGIN_PATH=$(realpath "$plugins"):/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins \
  "$src/scripts/headless.sh" pvpython "$(dirname "$0")/views_compressed.py" 1e-3 none deflate lz4 bitshuffle zfp >pv.out 2>&1
grep -E '^(ok|FAIL)' pv.out
check "stock ParaView reads every compressed run through its views" "[ \$(grep -c '^ok' pv.out) = 5 ] && ! grep -q '^FAIL' pv.out"
check "the views' level 0 is the average of the leaves (h5py oracle)" "grep -q \"^ok   none: the view's level 0\" pv.out"
exit $fail
