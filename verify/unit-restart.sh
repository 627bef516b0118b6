# aoe unit restart: restart builder-app.service and show it, before and after, as systemd and
# the guest kernel see it. Not run on the host: service-restart.sh sends this text as the
# command of ONE SSH call (a TCG guest under load takes seconds per SSH handshake).
# Absolute paths and shell builtins only, so a wrapper earlier in PATH changes nothing.
unit=builder-app.service
starttime() { local stat rest; stat="$(< "/proc/$1/stat")" || return 1; rest="${stat##*) }"; set -- $rest; echo "${20}"; }
procs() {
  local pid start listed=""
  if [ -n "$1" ] && [ -r "/sys/fs/cgroup$1/cgroup.procs" ]; then
    while read -r pid; do
      start="$(starttime "$pid" 2>/dev/null)" && listed="$listed $pid:$start"
    done < "/sys/fs/cgroup$1/cgroup.procs"
  fi
  echo "${listed# }"
}
# probe [PID:START...]: the unit's state (one systemctl call), and which of the named processes still run
probe() {
  local shown old main cg survivors=""
  shown="$(/usr/bin/systemctl show -p MainPID -p KillMode -p DropInPaths -p ControlGroup -p ActiveState "$unit")"
  printf '%s\n' "$shown"
  main="$(printf '%s\n' "$shown" | /usr/bin/sed -n 's/^MainPID=//p')"
  cg="$(printf '%s\n' "$shown" | /usr/bin/sed -n 's/^ControlGroup=//p')"
  for old in "$@"; do
    [ "$(starttime "${old%%:*}" 2>/dev/null)" = "${old#*:}" ] && survivors="$survivors $old"
  done
  echo "Survivors=${survivors# }"
  echo "Procs=$(procs "$cg")"
  if [ "${main:-0}" != 0 ] && [ -r "/proc/$main/cgroup" ]; then echo "MainPIDCgroup=$(< "/proc/$main/cgroup")"; else echo "MainPIDCgroup="; fi
  CGROUP="$cg"
}
echo "== before"; probe
before="$(procs "$CGROUP")"
echo "== restart"; output="$(/usr/bin/systemctl restart "$unit" 2>&1)"; echo "RestartExit=$?"; echo "RestartOutput=${output//$'\n'/ }"
echo "== after"; probe $before
