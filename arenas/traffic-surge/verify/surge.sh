# Helpers of the Traffic Surge verifiers (sourced, not run): the shared verify/lib.sh, the ledger's historical
# records, and the host-side load generator (aoe_tui.runtime.load_generator, run with the referee's own
# interpreter, AOE_PYTHON). The referee runs these on the host; nothing of them is ever copied into a guest.
. "$(dirname "$0")/../../../verify/lib.sh"

PROJECT_DIR="$(cd "$(dirname "$0")/../../.." && pwd)"
[ -n "${AOE_PYTHON:-}" ] || arena_fault "verifier environment lacks AOE_PYTHON (the interpreter of the load generator)"

HISTORY_IDS=(history-amber-a91 history-cobalt-f73 history-umber-2d4)
HISTORY_VALUES=(ledger-alpha ledger-beta ledger-gamma)
LOAD_REPORT="$SCRATCH/load.json"

# load PLAN: run the load generator's PLAN (JSON) against the public port; its report goes to $LOAD_REPORT.
load() {
  PYTHONPATH="$PROJECT_DIR" "$AOE_PYTHON" -m aoe_tui.runtime.load_generator "$BASE_URL" "$1" \
    >"$LOAD_REPORT" 2>"$SCRATCH/load.err" \
    || arena_fault "the load generator failed: $(tail -n 1 "$SCRATCH/load.err" | head -c 200)"
}

# sent FIELD I: FIELD of the report's I-th request after the load (from 0); empty when it was never sent.
sent() { jq -r --argjson i "$2" --arg f "$1" '.requests[$i][$f] // empty' "$LOAD_REPORT"; }

# sent_body_is I VALUE: that request's body is exactly VALUE (trailing newlines stripped, as a shell capture does).
sent_body_is() { jq -e --argjson i "$1" --arg v "$2" '.requests[$i].body | sub("\n+$"; "") == $v' "$LOAD_REPORT" >/dev/null; }

# sent_body I: the start of that request's body, literally, as one JSON string (control bytes escaped).
sent_body() { jq -r --argjson i "$1" '.requests[$i].body[0:60] | tojson' "$LOAD_REPORT"; }

# spread: how far apart (ms) the load's requests went out: evidence that the burst really was one.
spread() { jq '.start_spread_ms // null' "$LOAD_REPORT"; }

# connected: how many of the burst's connections were open when it was released (the requests after it
# connect behind all of them, in order): evidence that the priority write really queued behind the burst.
connected() { jq '.load_connected // 0' "$LOAD_REPORT"; }

# surge_cut I: the first request of the burst that the service dropped or refused (curl's words, not a timeout)
# before request I was answered, as "optional request N: ERROR"; nothing when the surge held until then. A
# service restarting drops its queued connections and then answers the next one at once: that answer came
# after no surge at all, so it proves nothing about priority under one.
surge_cut() {
  jq -r --argjson i "$1" '.requests[$i] as $r | [.load[] | select(.status == "000"
    and ((.error // "") | startswith("curl: (") and (startswith("curl: (28)") | not))
    and .started_ms + .elapsed_ms <= $r.started_ms + $r.elapsed_ms)] | first // empty
    | "optional request \(.i): \(.error)"' "$LOAD_REPORT"
}

# answered I: fail with curl's own words when request I got no answer (status 000), else print its status.
answered() {
  local status
  status="$(sent status "$1")"
  [ "$status" != 000 ] || fail "$(sent error "$1")"
  printf '%s' "$status"
}

# history_problem: a problem printer: the three historical records read back exactly (2 s each).
history_problem() {
  local i
  for i in "${!HISTORY_IDS[@]}"; do
    HTTP_TIMEOUT=2 get_problem "/priority/${HISTORY_IDS[$i]}" "${HISTORY_VALUES[$i]}" || return 1
  done
}

# health_problem: a problem printer: GET /health answers 200 "ready" within 2 s.
health_problem() { HTTP_TIMEOUT=2 get_problem /health ready; }
