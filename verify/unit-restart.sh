# aoe unit restart: restart builder-app.service and show it, before and after, as systemd and
# the guest kernel see it. Not run on the host: service-restart.sh sends this text as the
# command of ONE SSH call (a TCG guest under load takes seconds per SSH handshake).
# Absolute paths and shell builtins only, so a wrapper earlier in PATH changes nothing.
unit=builder-app.service
starttime() { local stat rest; stat="$(< "/proc/$1/stat")" || return 1; rest="${stat##*) }"; set -- $rest; echo "${20}"; }
procs() {
  local cg pid start listed=""
  cg="$(/usr/bin/systemctl show -p ControlGroup --value "$unit")"
  if [ -n "$cg" ] && [ -r "/sys/fs/cgroup$cg/cgroup.procs" ]; then
    while read -r pid; do
      start="$(starttime "$pid" 2>/dev/null)" && listed="$listed $pid:$start"
    done < "/sys/fs/cgroup$cg/cgroup.procs"
  fi
  echo "${listed# }"
}
# probe [PID:START...]: the unit's state, and which of the named processes still run
probe() {
  local old main survivors=""
  /usr/bin/systemctl show -p MainPID -p KillMode -p DropInPaths -p ControlGroup -p ActiveState "$unit"
  for old in "$@"; do
    [ "$(starttime "${old%%:*}" 2>/dev/null)" = "${old#*:}" ] && survivors="$survivors $old"
  done
  echo "Survivors=${survivors# }"
  echo "Procs=$(procs)"
  main="$(/usr/bin/systemctl show -p MainPID --value "$unit")"
  if [ "${main:-0}" != 0 ] && [ -r "/proc/$main/cgroup" ]; then echo "MainPIDCgroup=$(< "/proc/$main/cgroup")"; else echo "MainPIDCgroup="; fi
}
echo "== before"; probe
before="$(procs)"
echo "== restart"; output="$(/usr/bin/systemctl restart "$unit" 2>&1)"; echo "RestartExit=$?"; echo "RestartOutput=${output//$'\n'/ }"
echo "== after"; probe $before
