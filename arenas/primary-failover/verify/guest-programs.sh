# Runs in the guest, sent over SSH by failover.sh's programs_problem (never copied there). The referee puts
# SUMS (sha256sum -c lines of the arena's programs and units as provisioned) and UNITS (unit:port pairs)
# in front. Prints one line for a person per way the guest differs from what was provisioned, then "checked".
printf '%s' "$SUMS" | sha256sum -c --quiet 2>/dev/null \
  | sed -n 's/^\(.*\): FAILED.*$/the arena program \1 is not the one provisioned (it must not be changed)/p'
for pair in $UNITS; do
  unit="${pair%:*}" port="${pair#*:}"
  fragment="$(systemctl show -p FragmentPath --value "$unit")"
  [ "$fragment" = "/etc/systemd/system/$unit" ] \
    || echo "$unit runs from ${fragment:-no unit file}, not the provisioned /etc/systemd/system/$unit"
  dropins="$(systemctl show -p DropInPaths --value "$unit")"
  [ -z "$dropins" ] || echo "$unit is changed by drop-ins ($dropins): the arena's units must run as provisioned"
  pid="$(systemctl show -p MainPID --value "$unit")"
  ss -Hltnp "sport = :$port" | grep -q "pid=$pid," \
    || echo "port $port is not served by $unit's own process (MainPID ${pid:-none}): the arena's proxy and replica must be the ones serving"
done
echo checked
