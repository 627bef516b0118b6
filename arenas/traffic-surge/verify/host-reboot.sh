#!/usr/bin/env bash
# host-reboot, in the referee's two phases (AOE_VERIFY_PHASE): before the reboot, health and the record written
# by restart-under-load must be there; after the referee's reboot (proven from outside), health, that record
# and the three historical records must come back on their own (up to 35 tries 1 s apart).
. "$(dirname "$0")/surge.sh"
record="$(jq -r '."restart-under-load".evidence.record // empty' "$AOE_PREVIOUS_EVIDENCE")"
value="$(jq -r '."restart-under-load".evidence.value // empty' "$AOE_PREVIOUS_EVIDENCE")"
[ -n "$record" ] && [ -n "$value" ] || arena_fault "no restart-under-load evidence to reuse in $AOE_PREVIOUS_EVIDENCE"
kept() { health_problem && HTTP_TIMEOUT=2 get_problem "/priority/$record" "$value" && history_problem; }
case "${AOE_VERIFY_PHASE:-}" in
  before_reboot)
    no_problem kept || fail "before the host reboot: $PROBLEM"
    evidence --arg record "$record" '{prepared: $record}'
    ;;
  after_reboot)
    [ -n "${AOE_REBOOT_PROOF:-}" ] && [ -f "$AOE_REBOOT_PROOF" ] || arena_fault "the referee gave no reboot proof"
    # AOE_TEST_REBOOT_TRIES: fast tests only (the referee passes no such variable): fewer tries for a known failure.
    poll_until "${AOE_TEST_REBOOT_TRIES:-35}" 1 kept || fail "priority state or traffic service did not survive reboot: $PROBLEM"
    evidence --arg record "$record" --arg value "$value" --slurpfile proof "$AOE_REBOOT_PROOF" \
      '{historical_records: 3, reboot: true, record: $record, value: $value} + $proof[0]'
    ;;
  *) arena_fault "AOE_VERIFY_PHASE must be before_reboot or after_reboot, not '${AOE_VERIFY_PHASE:-}'" ;;
esac
