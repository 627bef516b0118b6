#!/usr/bin/env bash
# host-reboot, in the referee's two phases (AOE_VERIFY_PHASE): before the reboot v2 must be serving; after the
# referee's reboot (libvirt, proven from outside) within 40 tries 1 s apart health, version v2, the record
# written through v2 and both originals answer through the proxy.
. "$(dirname "$0")/rollout.sh"
written_record
deployed_problem() { v2_record_problem "$RECORD" "$VALUE" && serving_problem v2; }
case "${AOE_VERIFY_PHASE:-}" in
  before_reboot)
    no_problem deployed_problem || fail "before the host reboot: $PROBLEM"
    evidence --arg record "$RECORD" '{prepared: $record}'
    ;;
  after_reboot)
    [ -n "${AOE_REBOOT_PROOF:-}" ] && [ -f "$AOE_REBOOT_PROOF" ] || arena_fault "the referee gave no reboot proof"
    poll_until 40 1 deployed_problem \
      || fail "v2 deployment or preserved records did not survive host reboot: $PROBLEM"
    evidence --arg record "$RECORD" --arg value "$VALUE" --slurpfile proof "$AOE_REBOOT_PROOF" \
      '{reboot: true, record: $record, value: $value, version: "v2"} + $proof[0]'
    ;;
  *) arena_fault "AOE_VERIFY_PHASE must be before_reboot or after_reboot, not '${AOE_VERIFY_PHASE:-}'" ;;
esac
