#!/usr/bin/env bash
# Regenerates tbo-support-et0.csv.gz: ggml-et's real supports_op verdict for
# every eval case string of test-backend-ops, as
#   test-backend-ops support -b ET0 --output csv
# prints it. The file in git came from ggml d99724f2b141 (ggml-org/ggml
# d99724f2b141fed9e1a9f402213506c081433465, the version of et's built-in ABI
# manifest), with ggml-et on the sys_emu emulator of ../shared/et-stack:
# 19,726 cases. Run it from anywhere; the emulator's logs go to a scratch
# folder. Regenerate it together with the ABI manifest, never alone.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
"$root/.ci/test-backend-ops" support -b ET0 --output csv > support.csv
n=$(($(wc -l < support.csv) - 1))
echo "gen-tbo-support: $n cases" >&2
gzip -9n -c support.csv > "$here/tbo-support-et0.csv.gz"
