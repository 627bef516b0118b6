#!/usr/bin/env bash
# process-new: a fresh job POSTed now is accepted (202 within 3 s) and completes exactly once
# (up to 30 polls 1 s apart). Later milestones reuse this job.
. "$(dirname "$0")/queue.sh"
JOB="fresh-$(hex 8)"
PAYLOAD="opaque-$(hex 12)"
HTTP_TIMEOUT=3 http POST "/jobs/$JOB" "$PAYLOAD"; code=$?
[ $code -eq 0 ] || fail "$(curl_problem "POST /jobs/$JOB" $code)"
[ "$HTTP_STATUS" = 202 ] || fail "POST returned $HTTP_STATUS (POST /jobs/$JOB must answer 202)"
poll_until 30 1 job_problem "$JOB" "$PAYLOAD" \
  || fail "new job did not complete exactly once: $PROBLEM"
evidence --arg job "$JOB" --arg payload "$PAYLOAD" '{completed: true, job: $job, payload: $payload}'
