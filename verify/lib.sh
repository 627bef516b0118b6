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
    28) echo "$what: the service did not answer within 5 s" ;;
    *) echo "$what: $(tail -n 1 "$SCRATCH/curl.err")" ;;
  esac
}

# At most 64 KiB of a body is ever read into the shell: a service may answer without end.
body() { head -c 65536 "$HTTP_BODY"; }

# expect_health CONTEXT: GET /health must answer 200 "ready".
expect_health() {
  local context="$1" code
  http GET /health; code=$?
  [ $code -eq 0 ] || fail "$(curl_problem "GET /health$context" $code)"
  [ "$HTTP_STATUS" = 200 ] || fail "GET /health$context returned $HTTP_STATUS, expected 200"
  [ "$(body)" = ready ] || fail "GET /health$context returned body '$(body | head -c 60)', expected 'ready'"
}

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

# expect_guest_file PATH CONTENT CONTEXT: the guest file PATH exists with exactly CONTENT.
expect_guest_file() {
  guest_run "cat -- '$1'"
  [ "$GUEST_CODE" -eq 0 ] || fail "$1 is missing in the guest$3"
  [ "$GUEST_OUT" = "$2" ] || fail "$1 in the guest holds '$(printf '%s' "$GUEST_OUT" | head -c 60)' instead of '$2'$3"
}

# expect_port_free PORT CONTEXT: nothing listens on guest TCP port PORT.
expect_port_free() {
  guest_run "ss -Hltn 'sport = :$1'"
  [ "$GUEST_CODE" -eq 0 ] || fail "cannot list the guest's listening sockets$2: $(printf '%s' "$GUEST_OUT" | tail -n 1 | head -c 200)"
  [ -z "$GUEST_OUT" ] || fail "something listens on guest port $1$2"
}

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
