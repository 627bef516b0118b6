#!/usr/bin/env bash
# bounded-optional: 16 concurrent GET /optional/bounded-<i> (2 s each): every one is either shed on purpose
# (429 or 503) or served (200 with exactly optional:bounded-<i>). A fast server that serves them all passes.
. "$(dirname "$0")/surge.sh"
load '{"load": {"count": 16, "path": "/optional/bounded-{i}", "timeout": 2}, "wait_for_load": true}'
problem="$(jq -r '.load[] | select(.status != "429" and .status != "503")
  | if .status != "200" then "optional request \(.i) was neither served nor deliberately shed: \(.status)"
    elif (.body | sub("\n+$"; "")) != "optional:bounded-\(.i)"
    then "optional request \(.i) was served with body \(.body[0:60] | tojson) instead of optional:bounded-\(.i)"
    else empty end' "$LOAD_REPORT" | head -n 1)"
[ -z "$problem" ] || fail "$problem"
evidence --slurpfile report "$LOAD_REPORT" '$report[0] as $r | {bounded: true, requests: ($r.load | length),
  served: ([$r.load[] | select(.status == "200")] | length),
  shed: ([$r.load[] | select(.status == "429" or .status == "503")] | length), start_spread_ms: $r.start_spread_ms}'
