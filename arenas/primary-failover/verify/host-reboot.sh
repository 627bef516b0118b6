#!/usr/bin/env bash
# host-reboot, in the referee's two phases (AOE_VERIFY_PHASE): before the reboot the promoted topology must be
# in place; after the referee's reboot (libvirt, proven from outside) it must come back on its own within 40
# tries 1 s apart: health, role primary, the post-failover record and the originals through the proxy, and in
# the guest both markers, upstream 8082, role primary and nothing on 8081; then the arena's own programs.
. "$(dirname "$0")/failover.sh"
written_record
topology_problem() { reads_problem && record_problem "$RECORD" "$VALUE" && fence_problem; }
case "${AOE_VERIFY_PHASE:-}" in
  before_reboot)
    no_problem topology_problem || fail "before the host reboot: $PROBLEM"
    evidence --arg record "$RECORD" '{prepared: $record}'
    ;;
  after_reboot)
    [ -n "${AOE_REBOOT_PROOF:-}" ] && [ -f "$AOE_REBOOT_PROOF" ] || arena_fault "the referee gave no reboot proof"
    poll_until 40 1 topology_problem \
      || fail "promoted primary, fencing, or records did not survive reboot: $PROBLEM"
    no_problem programs_problem || fail "after the host reboot, $PROBLEM"
    evidence --arg record "$RECORD" --arg value "$VALUE" --slurpfile proof "$AOE_REBOOT_PROOF" \
      '{old_primary: "fenced", reboot: true, record: $record, role: "primary", value: $value} + $proof[0]'
    ;;
  *) arena_fault "AOE_VERIFY_PHASE must be before_reboot or after_reboot, not '${AOE_VERIFY_PHASE:-}'" ;;
esac
