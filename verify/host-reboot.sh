#!/usr/bin/env bash
# host-reboot, in the two phases the referee runs for a host_reboot milestone:
#   AOE_VERIFY_PHASE=before_reboot  store a fresh record (saved in AOE_PREPARED_FILE);
#   (the referee reboots the guest through libvirt — ACPI power button, a reset if the guest
#    ignores it — and proves it from outside: AOE_REBOOT_PROOF says how it was caused and proven)
#   AOE_VERIFY_PHASE=after_reboot   health and that record must come back without anyone's help.
. "$(dirname "$0")/lib.sh"
[ -n "${AOE_PREPARED_FILE:-}" ] || arena_fault "the referee gave no AOE_PREPARED_FILE"
case "${AOE_VERIFY_PHASE:-}" in
  before_reboot)
    record="record-$(hex 8)"
    value="opaque-$(hex 16)"
    expect_health " before the reboot"
    put_record "$record" "$value" " before the reboot"
    jq -cn --arg record "$record" --arg value "$value" '{record: $record, value: $value}' >"$AOE_PREPARED_FILE" \
      || arena_fault "cannot write $AOE_PREPARED_FILE"
    evidence --arg record "$record" '{prepared: $record}'
    ;;
  after_reboot)
    [ -n "${AOE_REBOOT_PROOF:-}" ] && [ -f "$AOE_REBOOT_PROOF" ] || arena_fault "the referee gave no reboot proof"
    # The guest's own word (its boot id) is never enough: the hypervisor and the console must agree.
    jq -e '(.reboot_proven_by | index("console-banner")) and
           ((.reboot_proven_by | index("libvirt-event")) or (.reboot_proven_by | index("referee-reset")))' \
      "$AOE_REBOOT_PROOF" >/dev/null || arena_fault "the referee's reboot proof lacks an outside witness: $(head -c 300 "$AOE_REBOOT_PROOF")"
    record="$(jq -r .record "$AOE_PREPARED_FILE")"
    value="$(jq -r .value "$AOE_PREPARED_FILE")"
    context=" after the host reboot"
    [ "$(jq -r .reboot_caused_by "$AOE_REBOOT_PROOF")" = reset-fallback ] \
      && context="$context (a reset: the guest ignored the ACPI power button)"
    wait_for_health 60 "$context"
    expect_record "$record" "$value" "$context"
    evidence --arg record "$record" --arg value "$value" --slurpfile proof "$AOE_REBOOT_PROOF" \
      '{reboot: true, record: $record, value: $value} + $proof[0]'
    ;;
  *) arena_fault "AOE_VERIFY_PHASE must be before_reboot or after_reboot, not '${AOE_VERIFY_PHASE:-}'" ;;
esac
