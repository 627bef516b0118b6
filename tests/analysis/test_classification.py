"""Named shell commands and the kind each must get; a compound takes its strongest kind."""

from __future__ import annotations

import pytest

from aoe_tui.analysis.commands import script_effect
from aoe_tui.analysis.shell import parse_script
from aoe_tui.domain.analysis import ActionKind

D, V, L, M = ActionKind.DISCOVERY, ActionKind.VALIDATION, ActionKind.LIFECYCLE, ActionKind.MUTATION

EXAMPLES = [
    # read-only probes
    ("ls -la /opt", D),
    ("cat /etc/os-release | head -5", D),
    ("which python3; id; stat -c '%A' /opt/builder/app.py", D),
    ("ps aux | grep -v grep; ss -ltnp", D),
    ("findmnt /opt", D),
    ("python3 --version", D),
    ("sqlite3 /var/lib/x.db 'SELECT * FROM r'", D),
    ("sqlite3 -header -column /var/lib/x.db '.schema' 'SELECT count(*) FROM r;'", D),
    ("systemctl status builder-app --no-pager", D),
    ("systemctl cat builder-app.service; systemctl is-active builder-app; systemctl is-enabled builder-app", D),
    ("systemctl show queue-api.service -p After -p Requires", D),
    ("journalctl -u builder-app.service -n 50 --no-pager", D),
    ("echo confirm", D),  # "rm" inside a word is not rm
    ("printf 'format --- %s\\n' x; sleep 1", D),
    ("kill -0 547", D),
    ("sed -n '1,40p' /opt/builder/app.py", D),
    ("python3 -c \"import sqlite3; print(list(sqlite3.connect('/db').execute('SELECT 1')))\"", D),
    # validation
    ("curl -s http://127.0.0.1:8080/health", V),
    ("curl -s -o /dev/null -w '%{http_code}' -X PUT --data-binary x http://127.0.0.1:8080/records/a", V),
    ("python3 -m py_compile /opt/builder/app.py", V),
    ("python3 -m pytest -q tests/", V),
    ("bash -n /opt/builder/run.sh", V),
    ("head -c 256 /dev/urandom > /tmp/bin.dat; curl -s --data-binary @/tmp/bin.dat http://127.0.0.1:8080/r/b", V),
    (
        "python3 - <<'PY'\nimport urllib.request\nprint(urllib.request.urlopen('http://127.0.0.1:8080/health').read())\nPY",
        V,
    ),
    ("ss -ltn | grep 8080; curl -s http://127.0.0.1:8080/health", V),
    # mutation
    ("echo hi > /opt/builder/app.py", M),
    ("mkdir -p /opt/builder /var/lib/builder-app/records", M),
    ("echo 8082 | tee /var/lib/failover/upstream", M),
    ("cat > /opt/builder/app.py <<'EOF'\nprint('it''s')\nrm -rf /\nEOF", M),
    ("cp /tmp/app.py /opt/builder/app.py", M),
    ("mv /opt/a /opt/b", M),
    ("chmod +x /opt/builder/app.py", M),
    ("rm -f /var/lib/builder/records/old", M),
    ("sqlite3 /var/lib/x.db 'CREATE TABLE r (id TEXT)'", M),
    ("sqlite3 /var/lib/x.db \"INSERT INTO r VALUES ('a')\"", M),
    ("pip install flask", M),
    ("sed -i 's/8080/8081/' /opt/builder/app.py", M),
    ("python3 - <<'PY'\nopen('/var/lib/failover/upstream', 'w').write('8082')\nPY", M),
    # lifecycle
    ("systemctl stop builder-app", L),
    ("systemctl daemon-reload && systemctl enable --now builder-app.service", L),
    ("systemctl reset-failed builder-app.service", L),
    ("pkill -f app.py", L),
    ("kill 547", L),
    ("service builder-app restart", L),
    ("nohup python3 /opt/builder/app.py > /tmp/app.log 2>&1 &", L),
    # wrappers are unwrapped
    ("sudo systemctl restart builder-app", L),
    ("sudo -u root env PORT=1 bash -lc 'systemctl restart builder-app'", L),
    ("timeout 5 curl -s http://127.0.0.1:8080/health", V),
    ("env X=1 Y=2 mkdir /opt/x", M),
    ("sh -c 'echo x > /etc/builder.conf'", M),
    ("for u in a b; do systemctl is-enabled $u; done", D),
    ("echo \"count: $(sqlite3 /db 'SELECT count(*) FROM r')\"", D),
    # compounds take the strongest kind: mutation > lifecycle > validation > discovery
    ("curl -s http://127.0.0.1:8080/health; systemctl restart builder-app", L),
    ("mkdir -p /opt/b && systemctl start builder-app && curl -s http://127.0.0.1:8080/health", M),
    ("systemctl status builder-app; curl -s http://127.0.0.1:8080/health", V),
]


@pytest.mark.parametrize("script,kind", EXAMPLES, ids=[script[:50] for script, _ in EXAMPLES])
def test_command_kind(script, kind):
    assert script_effect(script).kind is kind


def test_written_paths_keep_their_leading_slash_and_skip_scratch_and_devices():
    effect = script_effect(
        "mkdir -p /opt/builder/ && cat > /etc/systemd/system/builder-app.service <<EOF\n[Unit]\nEOF\n"
        "echo x > /tmp/probe; ls 2>/dev/null; echo y >> /run/flag"
    )
    assert effect.written_paths == {"/opt/builder", "/etc/systemd/system/builder-app.service"}
    assert effect.service_units == {"builder-app.service"}
    assert "systemd" in effect.technologies


def test_systemctl_units_get_the_default_suffix_and_variables_are_ignored():
    effect = script_effect("systemctl restart failover-proxy queue-api.service $u 'failover*'")
    assert effect.service_units == {"failover-proxy.service", "queue-api.service"}


def test_heredoc_body_is_not_read_as_commands():
    commands = parse_script("python3 - <<'PY'\nimport os\nos.system('rm -rf /x')\nPY\necho done")
    assert [command.argv for command in commands] == [("python3", "-"), ("echo", "done")]
    assert "os.system" in commands[0].stdin_text


def test_substitutions_run_and_fd_redirections_are_not_files():
    commands = parse_script('echo "$(systemctl is-active a)" 2>&1 >> /var/log/x')
    assert commands[0].argv == ("systemctl", "is-active", "a")
    assert commands[1].written_files == ["/var/log/x"]


def test_a_broken_script_still_parses():
    assert parse_script("echo 'unterminated")[0].argv == ("echo", "unterminated")
