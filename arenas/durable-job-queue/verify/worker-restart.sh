#!/usr/bin/env bash
# worker-restart: restart job-worker.service in the guest; the fresh job is still completed exactly once.
. "$(dirname "$0")/queue.sh"
fresh_job
restart_units job-worker.service
problem="$(job_problem "$JOB" "$PAYLOAD")"
[ -z "$problem" ] || fail "after systemctl restart job-worker.service, $problem"
evidence --arg job "$JOB" --arg payload "$PAYLOAD" '{job: $job, payload: $payload, worker_restart: true}'
