#!/usr/bin/env bash
# host-reboot, in the referee's two phases (AOE_VERIFY_PHASE): before the reboot the fresh job of
# process-new must be there; after the referee's reboot (libvirt, proven from outside) health and that job
# must come back on their own (up to 30 tries 1 s apart). The backlog is not checked again.
. "$(dirname "$0")/queue.sh"
fresh_job
deployed() { HTTP_TIMEOUT=2 http GET /health && [ "$HTTP_STATUS" = 200 ] && [ "$(body)" = ready ] \
  || { echo "GET /health does not answer 200 ready"; return; }; job_problem "$JOB" "$PAYLOAD"; }
case "${AOE_VERIFY_PHASE:-}" in
  before_reboot)
    problem="$(deployed)"
    [ -z "$problem" ] || fail "before the host reboot: $problem"
    evidence --arg job "$JOB" '{prepared: $job}'
    ;;
  after_reboot)
    [ -n "${AOE_REBOOT_PROOF:-}" ] && [ -f "$AOE_REBOOT_PROOF" ] || arena_fault "the referee gave no reboot proof"
    poll_until 30 1 deployed \
      || fail "queue deployment or completed job did not survive reboot: $PROBLEM"
    evidence --arg job "$JOB" --arg payload "$PAYLOAD" --slurpfile proof "$AOE_REBOOT_PROOF" \
      '{job: $job, payload: $payload, reboot: true} + $proof[0]'
    ;;
  *) arena_fault "AOE_VERIFY_PHASE must be before_reboot or after_reboot, not '${AOE_VERIFY_PHASE:-}'" ;;
esac
