#!/usr/bin/env bash
# service-restart: store a fresh record, restart builder-app.service in the guest (by absolute
# path), and the record must still read back. A fresh record per attempt keeps a retry fair
# to a builder that fixed its storage mid-match.
#
# The restart must really have happened, as far as can be seen without trusting the guest's
# PATH: the unit's main PID changes (systemd's MainPID and the kernel's cgroup.procs and
# /proc/PID/cgroup agree on it), every process of the unit's cgroup before the restart is
# gone afterwards (PID and start time), and KillMode leaves no process behind; all of it
# in one SSH call (verify/unit-restart.sh runs in the guest). A TCP
# connection held from the host to the service port across the restart is recorded as
# evidence only: a proxy in front of the app keeps it open honestly. CONTRACT.md says what
# this does not prove.
. "$(dirname "$0")/lib.sh"
RESTART="$(< "$(dirname "$0")/unit-restart.sh")" || arena_fault "cannot read unit-restart.sh next to $0"

# section NAME: the key=value lines of one part of the guest's report
section() { printf '%s\n' "$report" | sed -n "/^== $1\$/,/^== /p" | grep -v '^== '; }
field() { printf '%s\n' "$1" | sed -n "s/^$2=//p" | head -n 1; }

record="record-$(hex 8)"
value="opaque-$(hex 16)"
put_record "$record" "$value" " before the restart"

# Held from the host across the restart: evidence only (an honest proxy would keep it open).
held=unavailable
{ exec 7<>"/dev/tcp/$AOE_HOST/$AOE_SERVICE_PORT"; } 2>/dev/null && held=open

report="$(guest "$RESTART" 2>&1)"; code=$?
[ $code -eq 255 ] && arena_fault "SSH to the guest failed while restarting builder-app.service: $(printf '%s' "$report" | tail -n 1)"
before="$(section before)"; restart="$(section restart)"; after="$(section after)"
[ $code -eq 0 ] && [ -n "$after" ] \
  || fail "cannot restart and inspect builder-app.service in the guest (exit $code): $(printf '%s' "$report" | tail -n 1)"

main_before="$(field "$before" MainPID)"
kill_mode="$(field "$before" KillMode)"
drop_ins="$(field "$before" DropInPaths)"
cgroup="$(field "$before" ControlGroup)"
procs_before="$(field "$before" Procs)"
case "$kill_mode" in
  control-group|mixed) ;;
  *) fail "builder-app.service has KillMode=$kill_mode (drop-ins: ${drop_ins:-none}): a restart would leave its old processes running, so it proves nothing" ;;
esac
[ "$(field "$before" ActiveState)" = active ] && [ "${main_before:-0}" != 0 ] \
  || fail "builder-app.service was not running as a unit before the restart (ActiveState=$(field "$before" ActiveState), MainPID=${main_before:-?}): the service on port 8080 must be the unit's process"
in_procs() { local entry; for entry in $2; do [ "${entry%%:*}" = "$1" ] && return 0; done; return 1; }
in_procs "$main_before" "$procs_before" && [[ "$(field "$before" MainPIDCgroup)" == *"$cgroup" ]] \
  || fail "builder-app.service's MainPID $main_before is not in its cgroup $cgroup as the kernel sees it (cgroup.procs: ${procs_before:-empty}); the guest's systemctl and kernel disagree"
[ "$(field "$restart" RestartExit)" = 0 ] \
  || fail "/usr/bin/systemctl restart builder-app.service failed in the guest: $(field "$restart" RestartOutput | tail -c 200)"

main_after="$(field "$after" MainPID)"
survivors="$(field "$after" Survivors)"
[ -z "$survivors" ] \
  || fail "after systemctl restart builder-app.service its old processes are still running (PID:start $survivors): the restart did not restart it"
[ "${main_after:-0}" != 0 ] && [ "$main_after" != "$main_before" ] \
  || fail "after systemctl restart builder-app.service its MainPID is ${main_after:-?} (was $main_before): the service was not restarted"
in_procs "$main_after" "$(field "$after" Procs)" \
  || fail "after systemctl restart builder-app.service its MainPID $main_after is not in the unit's cgroup as the kernel sees it"

wait_for_health 20 " after systemctl restart builder-app.service"
if [ "$held" = open ]; then
  read -r -t 1 -u 7 _; status=$?
  [ $status -gt 128 ] || held=closed
  exec 7<&-
fi
expect_record "$record" "$value" " after systemctl restart builder-app.service"
evidence --arg record "$record" --arg value "$value" --arg before "$main_before" --arg after "$main_after" \
  --arg kill_mode "$kill_mode" --arg drop_ins "$drop_ins" --arg old "$procs_before" --arg held "$held" \
  '{record: $record, restart: true, value: $value, main_pid_before: ($before | tonumber), main_pid_after: ($after | tonumber),
    kill_mode: $kill_mode, drop_ins: ($drop_ins | split(" ") | map(select(. != ""))),
    old_processes_gone: ($old | split(" ") | map(select(. != ""))), held_connection: $held}'
