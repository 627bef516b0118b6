# Helpers of the Zero-Downtime Rollout verifiers (sourced, not run): the shared verify/lib.sh plus the
# rollout's records and versions. Every check is a problem printer (verify/lib.sh). The continuity monitor is
# not here: the referee runs it ([[monitors]] in arena.toml) and judges it before uninterrupted-cutover's
# verifier runs.
. "$(dirname "$0")/../../../verify/lib.sh"

STATE=/var/lib/rollout
V1_PORT=8081
V2_PORT=8082
ORIGINAL_IDS=(customer-alpha-73c customer-beta-a19)
ORIGINAL_VALUES=(alpha-original beta-original)
UNITS=(rollout-v1.service rollout-v2.service rollout-proxy.service)
HTTP_TIMEOUT=2
VIA=" through the public proxy"

# serving_problem VERSION: health ready, /version VERSION and the original records through the proxy.
serving_problem() {
  local i
  get_problem /health ready "$VIA" || return 1
  get_problem /version "$1" "$VIA" || return 1
  for i in "${!ORIGINAL_IDS[@]}"; do
    get_problem "/records/${ORIGINAL_IDS[$i]}" "${ORIGINAL_VALUES[$i]}" "$VIA (an original record)" || return 1
  done
}

# v2_record_problem ID VALUE: health ready, /version v2 and the record written through v2.
v2_record_problem() {
  get_problem /health ready "$VIA" || return 1
  get_problem /version v2 "$VIA" || return 1
  get_problem "/records/$1" "$2" "$VIA (the record written through v2)"
}

# written_record: RECORD and VALUE of the record write-new stored (later milestones reuse it).
written_record() {
  RECORD="$(jq -r '."write-new".evidence.record // empty' "$AOE_PREVIOUS_EVIDENCE")"
  VALUE="$(jq -r '."write-new".evidence.value // empty' "$AOE_PREVIOUS_EVIDENCE")"
  [ -n "$RECORD" ] && [ -n "$VALUE" ] || arena_fault "no write-new evidence to reuse in $AOE_PREVIOUS_EVIDENCE"
}
