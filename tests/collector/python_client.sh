#!/usr/bin/env bash
# python/rewind/client.py and examples/python/window_plot.py against `rewind serve`:
# the Python client's window equals the file read with h5py, value by value.
#   python_client.sh REWIND SOURCE_DIR PYTHON
set -u
rewind=$1 src=$2 py=$3
. "$src/tests/collector/serve_util.sh"
in_tmpdir
"$rewind" run "$src/cases/default.toml" --output f.h5 --set time.end=0.05 --set output.visualisation_interval=0.025 -q >run.log 2>&1
start_serve f.h5 --token pytok
check "rewind serve is listening" "[ -n '$port' ]"
check "the Python client fetches, errors and refuses as documented; its window's ranges are the shown grids' (h5py)" \
  "$py $src/tests/collector/python_client_check.py $src $port pytok py.json f.h5"
check "... and its window equals the file (h5py), every value" "$py $src/tests/collector/check_window.py f.h5 py.json"
check "window_plot.py draws a window" \
  "PYTHONPATH=$src/python $py $src/examples/python/window_plot.py 127.0.0.1:$port --box 0,0,0,2.2,0.41,0 --budget 20000 --var p --time latest --token pytok --out w.png && [ -s w.png ]"
exit $fail
