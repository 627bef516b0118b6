# Shared helpers for the First Build verifiers (sourced, not run).
#
# Exit status is the referee's contract: 0 + evidence JSON = pass, 1 = the
# check failed (stderr's last line says why, for a person), 3 = the arena
# itself is broken (never blamed on the player).
# HTTP goes from the host through the forwarded port; SSH is used only to
# act on the guest (restart the unit), never to judge it.

fail() { printf '%s\n' "$*" >&2; exit 1; }
arena_fault() { printf '%s\n' "$*" >&2; exit 3; }

for name in AOE_TERRITORY_ID AOE_HOST AOE_SERVICE_PORT AOE_EVIDENCE_FILE AOE_PREVIOUS_EVIDENCE; do
  [ -n "$(eval "printf %s \"\${$name:-}\"")" ] || arena_fault "verifier environment lacks $name"
done
command -v curl >/dev/null || arena_fault "curl is not installed on the referee host"
command -v jq >/dev/null || arena_fault "jq is not installed on the referee host"

BASE_URL="http://$AOE_HOST:$AOE_SERVICE_PORT"
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
HTTP_STATUS=""
HTTP_BODY="$SCRATCH/body"

# http METHOD PATH [DATA] -> sets HTTP_STATUS, body in $HTTP_BODY; returns curl's exit code.
http() {
  local method="$1" path="$2" code
  : >"$HTTP_BODY"
  if [ $# -ge 3 ]; then
    HTTP_STATUS="$(curl -sS --max-time "${HTTP_TIMEOUT:-5}" --max-filesize 1048576 -X "$method" --data-binary "$3" -H 'Content-Type: application/octet-stream' \
      -o "$HTTP_BODY" -w '%{http_code}' "$BASE_URL$path" 2>"$SCRATCH/curl.err")"
  else
    HTTP_STATUS="$(curl -sS --max-time "${HTTP_TIMEOUT:-5}" --max-filesize 1048576 -X "$method" -o "$HTTP_BODY" -w '%{http_code}' "$BASE_URL$path" 2>"$SCRATCH/curl.err")"
  fi
  code=$?
  return $code
}

# A person-readable reason for a curl failure of `METHOD PATH`.
curl_problem() {
  local what="$1" code="$2"
  case "$code" in
    7|52|56) echo "$what: no answer from the service (nothing listening on guest port 8080?)" ;;
    28) echo "$what: the service did not answer within ${HTTP_TIMEOUT:-5} s" ;;
    *) echo "$what: $(tail -n 1 "$SCRATCH/curl.err")" ;;
  esac
}

# At most 64 KiB of a body is ever read into the shell: a service may answer without end.
body() { head -c 65536 "$HTTP_BODY"; }

# Problem printers (get_problem, the guest snapshot's checks, an arena's own *_problem helpers) print one line
# for a person and return 1 when something is wrong, and print nothing when all is right; an arena fault
# inside one exits 3. Run them with no_problem (or poll_until), which keeps that distinction.
PROBLEM=""

# no_problem COMMAND...: run a problem printer; 0 when it found nothing, else 1 with its line in PROBLEM.
# An arena fault inside it stays the arena's: the verifier exits 3 (its reason is already on stderr).
no_problem() {
  local code
  PROBLEM="$("$@")"; code=$?
  [ $code -ne 3 ] || exit 3
  [ $code -eq 0 ] && [ -z "$PROBLEM" ]
}

# poll_until TRIES INTERVAL COMMAND...: up to TRIES tries INTERVAL seconds apart, and within TRIES x INTERVAL
# seconds (slow answers do not stretch it past the verifier's timeout), until the problem printer COMMAND finds
# nothing; PROBLEM holds what it printed last. Returns 0 on success.
poll_until() {
  local tries="$1" interval="$2" try deadline; shift 2
  deadline=$(($(date +%s%3N) + $(awk -v t="$tries" -v i="$interval" 'BEGIN { printf "%d", t * i * 1000 }')))
  for try in $(seq "$tries"); do
    no_problem "$@" && return 0
    [ "$(date +%s%3N)" -lt $deadline ] || return 1
    sleep "$interval"
  done
  return 1
}

# get_problem PATH BODY CONTEXT: a problem printer: GET PATH must answer 200 with exactly BODY.
get_problem() {
  local path="$1" expected="$2" context="${3:-}" code
  http GET "$path"; code=$?
  if [ $code -ne 0 ]; then
    curl_problem "GET $path$context" $code
  elif [ "$HTTP_STATUS" != 200 ]; then
    echo "GET $path$context returned $HTTP_STATUS, expected 200"
  elif [ "$(body)" != "$expected" ]; then
    echo "GET $path$context returned body '$(body | head -c 60)', expected '$expected'"
  else
    return 0
  fi
  return 1
}

# expect_health CONTEXT: GET /health must answer 200 "ready".
expect_health() { no_problem get_problem /health ready "$1" || fail "$PROBLEM"; }

# wait_for_health SECONDS CONTEXT: poll until healthy, then a final strict check.
wait_for_health() {
  local seconds="$1" context="$2" deadline=$((SECONDS + $1))
  while [ $SECONDS -lt $deadline ]; do
    if http GET /health && [ "$HTTP_STATUS" = 200 ] && [ "$(body)" = ready ]; then return 0; fi
    sleep 0.5
  done
  expect_health "$context (waited ${seconds} s)"
}

# expect_record ID VALUE CONTEXT: GET /records/ID must return exactly VALUE.
expect_record() {
  local id="$1" value="$2" context="$3" code
  http GET "/records/$id"; code=$?
  [ $code -eq 0 ] || fail "$(curl_problem "GET /records/$id$context" $code)"
  [ "$HTTP_STATUS" = 200 ] || fail "GET /records/$id returned $HTTP_STATUS$context (the record written earlier is gone)"
  [ "$(body)" = "$value" ] || fail "GET /records/$id$context returned '$(body | head -c 60)' instead of the stored '$value'"
}

# put_record ID VALUE CONTEXT: PUT /records/ID must store VALUE (the contract says 204; any 2xx is accepted).
put_record() {
  local id="$1" value="$2" context="$3" code
  http PUT "/records/$id" "$value"; code=$?
  [ $code -eq 0 ] || fail "$(curl_problem "PUT /records/$id$context" $code)"
  case "$HTTP_STATUS" in 2??) ;; *) fail "PUT /records/$id$context returned $HTTP_STATUS, expected 204" ;; esac
}

# guest COMMAND...: act on the guest as root (SSH, or the scripted host's stand-in).
guest() {
  if [ -n "${AOE_GUEST_EXEC:-}" ]; then
    "$AOE_GUEST_EXEC" "$@"
  else
    # Only the territory's own key: no user config, no agent, no forwarding.
    ssh -q -F /dev/null -o IdentitiesOnly=yes -o IdentityAgent=none -o ForwardAgent=no \
      -i "$AOE_SSH_KEY" -o UserKnownHostsFile="$AOE_KNOWN_HOSTS" -o StrictHostKeyChecking=yes \
      -o BatchMode=yes -o ConnectTimeout=10 -p "$AOE_SSH_PORT" "${AOE_SSH_USER:-root}@$AOE_HOST" "$*"
  fi
}

hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }

# evidence JQ-ARGS... FILTER: write the evidence JSON and pass.
evidence() {
  jq -cn "$@" >"$AOE_EVIDENCE_FILE" || arena_fault "cannot write evidence to $AOE_EVIDENCE_FILE"
  exit 0
}

# -- Guest checks over SSH, shared by the arenas (an SSH drop is the arena's problem, not the player's) --

GUEST_TRIES=3
GUEST_OUT=""
GUEST_CODE=0

# guest_run COMMAND...: run in the guest; sets GUEST_OUT (stdout+stderr) and GUEST_CODE. A dropped
# connection (ssh exit 255) is retried GUEST_TRIES times 1 s apart, then the arena is at fault.
guest_run() {
  local try
  for try in $(seq "$GUEST_TRIES"); do
    GUEST_OUT="$(guest "$@" 2>&1)"; GUEST_CODE=$?
    [ "$GUEST_CODE" -ne 255 ] && return 0
    sleep 1
  done
  arena_fault "SSH to the guest dropped $GUEST_TRIES times: $(printf '%s' "$GUEST_OUT" | tail -n 1 | head -c 200)"
}

declare -A GUEST_FILES=()
GUEST_PORTS=""

# guest_snapshot PATH...: a problem printer reading, in one SSH call, the guest's listening TCP ports
# (GUEST_PORTS, like " 22 8080 ") and each regular file PATH (GUEST_FILES[PATH]: its first 4 KiB, trailing
# newlines stripped; no entry when missing), so a check of several facts costs one connection (three TCG
# guests answer SSH slowly). The snapshot_* checks below read it.
guest_snapshot() {
  local path line i=1 lines quoted=""
  GUEST_FILES=()
  [ $# -eq 0 ] || quoted="$(printf '%q ' "$@")"
  guest_run "ss -Hltn | awk '{ sub(/.*:/, \"\", \$4); print \$4 }' | sort -un | tr '\n' ' '; echo
for f in $quoted; do if [ -f \"\$f\" ]; then printf +; head -c 4096 -- \"\$f\" | base64 -w0; echo; else echo -; fi; done"
  mapfile -t lines <<<"$GUEST_OUT"
  if [ "$GUEST_CODE" -ne 0 ] || [ "${#lines[@]}" -ne $(($# + 1)) ]; then
    echo "cannot read the guest's listening sockets and files: $(printf '%s' "$GUEST_OUT" | tail -n 1 | head -c 200)"
    return 1
  fi
  GUEST_PORTS=" ${lines[0]} "
  for path in "$@"; do
    line="${lines[$i]}"; i=$((i + 1))
    [ "${line:0:1}" = + ] && GUEST_FILES["$path"]="$(printf '%s' "${line:1}" | base64 -d 2>/dev/null)"
  done
  return 0
}

# snapshot_present_problem PATH WHY: a problem printer: the snapshot holds the file PATH (WHY says what it is for).
snapshot_present_problem() {
  [ -n "${GUEST_FILES[$1]+set}" ] && return 0
  echo "$1 is missing in the guest$2"
  return 1
}

# snapshot_file_problem PATH CONTENT: a problem printer: the snapshot's PATH holds exactly CONTENT.
snapshot_file_problem() {
  snapshot_present_problem "$1" || return 1
  [ "${GUEST_FILES[$1]}" = "$2" ] && return 0
  echo "$1 in the guest holds '$(printf '%s' "${GUEST_FILES[$1]}" | head -c 60)' instead of '$2'"
  return 1
}

# snapshot_port_problem PORT WHY: a problem printer: no TCP socket listened on guest port PORT in the snapshot.
snapshot_port_problem() {
  case "$GUEST_PORTS" in *" $1 "*) echo "something listens on guest port $1$2"; return 1 ;; esac
}

# expect_guest_file PATH CONTENT CONTEXT: the guest file PATH exists with exactly CONTENT.
guest_file_problem() { guest_snapshot "$1" && snapshot_file_problem "$1" "$2"; }
expect_guest_file() { no_problem guest_file_problem "$1" "$2" || fail "$PROBLEM$3"; }

# expect_port_free PORT CONTEXT: nothing listens on guest TCP port PORT.
guest_port_problem() { guest_snapshot && snapshot_port_problem "$1"; }
expect_port_free() { no_problem guest_port_problem "$1" || fail "$PROBLEM$2"; }

# expect_units_active UNIT...: every unit is active in the guest (the first that is not is named).
expect_units_active() {
  local unit state states
  guest_run "systemctl is-active $*"
  mapfile -t states <<<"$GUEST_OUT"
  [ "${#states[@]}" -eq $# ] \
    || fail "cannot read the state of $* in the guest: $(printf '%s' "$GUEST_OUT" | tail -n 1 | head -c 200)"
  for unit in "$@"; do
    state="${states[0]}"; states=("${states[@]:1}")
    [ "$state" = active ] || fail "unit $unit is $(printf '%s' "$state" | head -c 40) in the guest, not active"
  done
}

# restart_units UNIT...: `systemctl restart` them all at once in the guest; a non-zero exit fails.
restart_units() {
  guest_run "systemctl restart $*"
  [ "$GUEST_CODE" -eq 0 ] || fail "systemctl restart $* failed in the guest (exit $GUEST_CODE): $(printf '%s' "$GUEST_OUT" | tail -n 1 | head -c 200)"
}
