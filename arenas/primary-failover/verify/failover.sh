# Helpers of the Primary Failover verifiers (sourced, not run): the shared verify/lib.sh plus the failover's
# records, its control files and the arena's own programs. Every check is a problem printer (verify/lib.sh);
# each reads the guest in one SSH call, since a failing check is retried every tick on three TCG guests.
. "$(dirname "$0")/../../../verify/lib.sh"

STATE=/var/lib/failover
FAILED_PORT=8081
PROMOTED_PORT=8082
ORIGINAL_IDS=(customer-red-4a7 customer-blue-8d2 customer-green-f31)
ORIGINAL_VALUES=(red-original blue-original green-original)
HTTP_TIMEOUT=2
VIA=" through the proxy"

# The arena's own programs and units, written by provisioning (arena.toml) from these arena files. Root can
# edit them on Debian (the original's lived on a read-only store): failover-lock.service makes them immutable
# and programs_problem checks from here that the guest still runs them as provisioned (OPERATORS.md).
PROVISIONING="$(dirname "$0")/../provisioning"
declare -A PROGRAMS=(
  [/usr/local/lib/aoe/failover-seed]=failover-seed
  [/usr/local/lib/aoe/failover-replica.py]=failover-replica.py
  [/usr/local/lib/aoe/failover-proxy.py]=failover-proxy.py
  [/etc/systemd/system/failover-seed.service]=failover-seed.service
  [/etc/systemd/system/failover-replica.service]=failover-replica.service
  [/etc/systemd/system/failover-proxy.service]=failover-proxy.service
  [/etc/systemd/system/failover-lock.service]=failover-lock.service
)
SERVING_UNITS="failover-replica.service:$PROMOTED_PORT failover-proxy.service:8080"

# reads_problem: the public service answers health, role primary and the three original records (2 s each;
# any status but 200 fails), else the first thing wrong.
reads_problem() {
  local i
  get_problem /health ready "$VIA" || return 1
  get_problem /role primary "$VIA" || return 1
  for i in "${!ORIGINAL_IDS[@]}"; do
    get_problem "/records/${ORIGINAL_IDS[$i]}" "${ORIGINAL_VALUES[$i]}" "$VIA (an original record)" || return 1
  done
}

# record_problem ID VALUE: the record written by writes-restored reads back exactly, with the role primary.
record_problem() {
  get_problem /role primary "$VIA" || return 1
  get_problem "/records/$1" "$2" "$VIA (the record written after the failover)"
}

# fence_problem: the old primary stays failed and is durably fenced, and the proxy aims at the promoted
# replica: both markers, upstream 8082, role primary, nothing listening on 8081 (one SSH call).
fence_problem() {
  guest_snapshot "$STATE/primary.failed" "$STATE/primary.fenced" "$STATE/upstream" "$STATE/replica.role" || return 1
  snapshot_present_problem "$STATE/primary.failed" " (the failed primary's marker must be kept)" || return 1
  snapshot_present_problem "$STATE/primary.fenced" " (the old primary was never fenced)" || return 1
  snapshot_file_problem "$STATE/upstream" "$PROMOTED_PORT" || return 1
  snapshot_file_problem "$STATE/replica.role" primary || return 1
  snapshot_port_problem "$FAILED_PORT" " (the failed primary's port must stay dead)"
}

# programs_problem: the guest still runs the arena's own proxy and replica as provisioned: their programs and
# units byte for byte, the units from their own files without drop-ins, each unit's own process listening
# on its port (one SSH call; verify/guest-programs.sh runs there).
programs_problem() {
  local path sums="" script
  for path in "${!PROGRAMS[@]}"; do
    sums+="$(sha256sum <"$PROVISIONING/${PROGRAMS[$path]}" | cut -c1-64)  $path"$'\n'
  done
  script="$(<"$(dirname "$0")/guest-programs.sh")" || arena_fault "cannot read guest-programs.sh next to $0"
  guest_run "SUMS='$sums' UNITS='$SERVING_UNITS'
$script"
  if [ "$GUEST_CODE" -ne 0 ] || [ "$(printf '%s' "$GUEST_OUT" | tail -n 1)" != checked ]; then
    echo "cannot inspect the arena's proxy and replica in the guest: $(printf '%s' "$GUEST_OUT" | tail -n 1 | head -c 200)"
    return 1
  fi
  [ "$GUEST_OUT" = checked ] && return 0
  printf '%s\n' "$GUEST_OUT" | head -n 1 | head -c 300
  return 1
}

# written_record: RECORD and VALUE of the record writes-restored stored (later milestones reuse it).
written_record() {
  RECORD="$(jq -r '."writes-restored".evidence.record // empty' "$AOE_PREVIOUS_EVIDENCE")"
  VALUE="$(jq -r '."writes-restored".evidence.value // empty' "$AOE_PREVIOUS_EVIDENCE")"
  [ -n "$RECORD" ] && [ -n "$VALUE" ] || arena_fault "no writes-restored evidence to reuse in $AOE_PREVIOUS_EVIDENCE"
}
