#!/bin/sh
# Regenerates cases.csv.gz: every eval case string of test-backend-ops at
# the ggml version of et's built-in ABI manifest (d99724f2), as
# "op_name","op_params" rows, from the real tool:
#   internal/ops/graph/tbocases/regen.sh   (from the repository root)
set -eu
root=$(cd "$(dirname "$0")/../../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && "$root/.ci/test-backend-ops" support -b CPU --output csv > support.csv)
python3 - "$tmp/support.csv" > "$tmp/cases.csv" <<'PY'
import csv, sys
r = csv.DictReader(open(sys.argv[1], newline=''))
w = csv.writer(sys.stdout, lineterminator='\n')
w.writerow(['op_name', 'op_params'])
for row in r:
    w.writerow([row['op_name'], row['op_params']])
PY
gzip -9n < "$tmp/cases.csv" > "$root/internal/ops/graph/tbocases/cases.csv.gz"
