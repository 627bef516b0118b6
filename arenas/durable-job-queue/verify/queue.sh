# Helpers of the Durable Job Queue verifiers (sourced, not run): the shared verify/lib.sh plus the job API.
# The referee runs these on the host; nothing of them is ever copied into a guest (fog of war).
. "$(dirname "$0")/../../../verify/lib.sh"

ACCEPTED_IDS=(accepted-alpha-7d3 accepted-beta-91e accepted-gamma-c42)
ACCEPTED_PAYLOADS=(alpha beta gamma)

# job_problem ID PAYLOAD: prints nothing when GET /jobs/ID shows the job completed exactly once with its
# own payload; otherwise one line saying what is wrong (for a person).
job_problem() {
  local id="$1" payload="$2" code why
  HTTP_TIMEOUT=2 http GET "/jobs/$id"; code=$?
  [ $code -eq 0 ] || { curl_problem "GET /jobs/$id" $code; return; }
  [ "$HTTP_STATUS" = 200 ] || { echo "GET /jobs/$id returned $HTTP_STATUS"; return; }
  why="$(jq -r --arg id "$id" --arg payload "$payload" '
    if type != "object" then "is not a JSON object"
    elif .id != $id then "has id \(.id | tostring | .[0:60])"
    elif .payload != $payload then "has payload \(.payload | tostring | .[0:60]) instead of \($payload)"
    elif .status != "completed" then "has status \(.status | tostring | .[0:30]), not completed"
    elif .result != ("processed:" + $payload) then "has result \(.result | tostring | .[0:60]), not processed:\($payload)"
    elif (.attempts | type) != "number" or .attempts != 1 then "has attempts \(.attempts | tostring | .[0:20]), not 1"
    else empty end' "$HTTP_BODY" 2>/dev/null)" || why="did not answer JSON"
  [ -z "$why" ] || echo "job $id $why"
}

# backlog_problem: the first accepted job that is not completed exactly once, or nothing.
backlog_problem() {
  local i problem
  for i in "${!ACCEPTED_IDS[@]}"; do
    problem="$(job_problem "${ACCEPTED_IDS[$i]}" "${ACCEPTED_PAYLOADS[$i]}")"
    [ -z "$problem" ] || { echo "$problem"; return; }
  done
}

# fresh_job: JOB and PAYLOAD of the job process-new submitted (later milestones reuse it).
fresh_job() {
  JOB="$(jq -r '."process-new".evidence.job // empty' "$AOE_PREVIOUS_EVIDENCE")"
  PAYLOAD="$(jq -r '."process-new".evidence.payload // empty' "$AOE_PREVIOUS_EVIDENCE")"
  [ -n "$JOB" ] && [ -n "$PAYLOAD" ] || arena_fault "no process-new evidence to reuse in $AOE_PREVIOUS_EVIDENCE"
}
