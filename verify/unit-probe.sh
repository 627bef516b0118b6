# aoe unit probe: builder-app.service as systemd and the guest kernel see it.
# Not run on the host: service-restart.sh sends this text as the command of one SSH call
# (preceded by `set -- PID:START...` naming processes whose survival it asks about).
# Absolute paths and shell builtins only, so a wrapper earlier in PATH changes nothing.
unit=builder-app.service
/usr/bin/systemctl show -p MainPID -p KillMode -p DropInPaths -p ControlGroup -p ActiveState "$unit"
starttime() { local stat rest; stat="$(< "/proc/$1/stat")" || return 1; rest="${stat##*) }"; set -- $rest; echo "${20}"; }
survivors=""
for old in "$@"; do
  [ "$(starttime "${old%%:*}" 2>/dev/null)" = "${old#*:}" ] && survivors="$survivors $old"
done
echo "Survivors=${survivors# }"
cg="$(/usr/bin/systemctl show -p ControlGroup --value "$unit")"
procs=""
if [ -n "$cg" ] && [ -r "/sys/fs/cgroup$cg/cgroup.procs" ]; then
  while read -r pid; do
    start="$(starttime "$pid" 2>/dev/null)" && procs="$procs $pid:$start"
  done < "/sys/fs/cgroup$cg/cgroup.procs"
fi
echo "Procs=${procs# }"
main="$(/usr/bin/systemctl show -p MainPID --value "$unit")"
if [ "${main:-0}" != 0 ] && [ -r "/proc/$main/cgroup" ]; then echo "MainPIDCgroup=$(< "/proc/$main/cgroup")"; else echo "MainPIDCgroup="; fi
