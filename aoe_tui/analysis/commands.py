"""Classify one shell command by the program it runs and that program's own arguments.

Rules (see `effects` for how several commands combine):
- discovery: read-only probes — ls, cat, stat, id, ps, ss, findmnt, `python3 --version`,
  `systemctl status|cat|show|is-*|list-*`, journalctl, `sqlite3 db 'SELECT ...'`, `sed` without -i, ...
- validation: exercising the service or the code — curl/wget, test runners, `python3 -m py_compile`,
  `bash -n`, an inline Python HTTP probe.
- mutation: writes — output redirection to a real file, Write/Edit tools, mkdir, touch, tee, cp, mv,
  install, ln, chmod, chown, rm, `sed -i`, `sqlite3 ... INSERT/CREATE/...`, pip/apt/npm installs.
- lifecycle: `systemctl start|restart|stop|enable|disable|kill|daemon-reload|reset-failed|...`,
  `service x restart`, kill/pkill/killall, reboot, a program put in the background with `&`.
- neutral (no kind): echo, printf, sleep, cd, set, test, ... and programs we do not know.
Wrappers (sudo, env, timeout, nohup, xargs, `bash -c '...'`, `su -c`) are unwrapped first.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from aoe_tui.analysis.effects import Effect, is_scratch, of_kind, unit_name, write_effect
from aoe_tui.analysis.python_code import python_snippet_effect
from aoe_tui.analysis.shell import SimpleCommand, parse_script
from aoe_tui.analysis.technologies import program_name, technology_of_program
from aoe_tui.domain.analysis import ActionKind

DISCOVERY, VALIDATION, LIFECYCLE, MUTATION = (
    ActionKind.DISCOVERY,
    ActionKind.VALIDATION,
    ActionKind.LIFECYCLE,
    ActionKind.MUTATION,
)

_NEUTRAL = {
    "echo",
    "printf",
    "sleep",
    "true",
    "false",
    "exit",
    "return",
    "set",
    "cd",
    "pushd",
    "popd",
    "export",
    "local",
    "declare",
    "readonly",
    "read",
    "wait",
    "seq",
    ":",
    "shift",
    "trap",
    "unset",
    "break",
    "continue",
    "test",
    "[",
    "[[",
    "]]",
    "yes",
    "clear",
    "mktemp",
    "alias",
    "source",
    ".",
    "eval",
}
_PROBES = {
    "ls",
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "file",
    "stat",
    "id",
    "whoami",
    "groups",
    "hostname",
    "uname",
    "which",
    "whereis",
    "type",
    "ps",
    "pgrep",
    "pstree",
    "ss",
    "netstat",
    "lsof",
    "findmnt",
    "df",
    "du",
    "free",
    "uptime",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "od",
    "hexdump",
    "xxd",
    "strings",
    "wc",
    "sort",
    "uniq",
    "cut",
    "tr",
    "awk",
    "gawk",
    "column",
    "nl",
    "readlink",
    "realpath",
    "dirname",
    "basename",
    "printenv",
    "date",
    "journalctl",
    "lsblk",
    "blkid",
    "ip",
    "ifconfig",
    "getent",
    "dpkg-query",
    "rpm",
    "tree",
    "md5sum",
    "sha256sum",
    "sha1sum",
    "cksum",
    "cmp",
    "diff",
    "jq",
    "nproc",
    "lscpu",
    "dmesg",
    "w",
    "who",
    "last",
    "top",
    "locale",
    "timedatectl",
    "loginctl",
    "base64",
    "zcat",
    "lsmod",
    "lspci",
    "mountpoint",
    "getconf",
    "ulimit",
    "arch",
    "vmstat",
    "iostat",
    "apt-cache",
    "env",
    "hostnamectl",
    "tac",
    "fuser",
    "lsattr",
    "namei",
}
_SERVICE_CHECKERS = {
    "curl",
    "wget",
    "http",
    "https",
    "nc",
    "ncat",
    "netcat",
    "ab",
    "hey",
    "wrk",
    "siege",
    "pytest",
    "py.test",
    "tox",
    "nose2",
    "bats",
    "shellcheck",
}
_WRITERS = {"mkdir", "touch", "truncate", "mkfifo", "setfacl", "chattr"}
_PATH_CHANGERS = {
    "chmod",
    "chown",
    "chgrp",
    "rm",
    "rmdir",
    "unlink",
    "patch",
    "useradd",
    "userdel",
    "groupadd",
    "usermod",
    "adduser",
    "passwd",
    "chpasswd",
    "update-alternatives",
    "ldconfig",
    "mkfs",
    "mkswap",
}
_KILLERS = {"pkill", "killall", "reboot", "shutdown", "poweroff", "halt", "telinit", "start-stop-daemon", "systemd-run"}
_SYSTEMCTL_PROBES = {
    "status",
    "cat",
    "show",
    "is-active",
    "is-enabled",
    "is-failed",
    "is-system-running",
    "list-units",
    "list-unit-files",
    "list-dependencies",
    "list-timers",
    "list-sockets",
    "list-jobs",
    "get-default",
    "help",
    "show-environment",
    "--version",
    "--is-system-running",
}
_SYSTEMCTL_CHANGES = {"edit", "set-property", "set-default", "link", "revert", "preset-all"}
_SYSTEMCTL_OPTIONS_WITH_VALUE = {
    "-p",
    "-t",
    "-n",
    "-s",
    "-o",
    "-H",
    "-M",
    "--property",
    "--type",
    "--state",
    "--lines",
    "--output",
    "--signal",
    "--host",
    "--machine",
    "--root",
    "--kill-whom",
    "--job-mode",
    "--what",
}
_SHELLS = {"bash", "sh", "dash", "zsh", "ash", "ksh"}
_KEYWORDS = {
    "if",
    "then",
    "else",
    "elif",
    "do",
    "while",
    "until",
    "!",
    "{",
    "time",
    "nohup",
    "builtin",
    "exec",
    "command",
    "setsid",
    "nice",
    "ionice",
    "stdbuf",
}
_HEADERS = {"for", "case", "select", "function", "done", "fi", "esac", "}"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_SQL_CHANGES = re.compile(
    r"^\s*(INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|VACUUM|REINDEX|ATTACH|PRAGMA\s+[\w.]+\s*=)", re.IGNORECASE
)


def script_effect(script: str) -> Effect:
    """Everything a shell script does, merged."""
    effect = Effect()
    for command in parse_script(script):
        effect.merge(command_effect(command))
    return effect


def command_effect(command: SimpleCommand) -> Effect:
    effect = write_effect(command.written_files, command.stdin_text)
    argv = _unwrap(list(command.argv))
    if not argv:
        return effect
    name = program_name(argv[0])
    if name in _SHELLS:
        return effect.merge(_shell_effect(argv, command))
    if name == "su" and "-c" in argv[:-1]:
        return effect.merge(script_effect(argv[argv.index("-c") + 1]))
    technology = technology_of_program(argv[0])
    program_effect = _classify(name, argv[1:], command)
    if technology:
        program_effect.technologies.add(technology)
    if command.background and not program_effect.kinds and name not in _NEUTRAL | _PROBES:
        program_effect.kinds.add(LIFECYCLE)
    return effect.merge(program_effect)


def _unwrap(argv: list[str]) -> list[str]:
    """Strip what only changes how a command runs: keywords, `X=Y`, sudo/env/timeout/xargs and their options."""
    while argv:
        head = program_name(argv[0])
        if head in _HEADERS:
            return []
        if _ASSIGNMENT.match(argv[0]) or head in _KEYWORDS:
            if head == "command" and len(argv) > 1 and argv[1] in ("-v", "-V"):
                return ["which", *argv[2:]]
            argv = argv[1:]
            if head in ("nice", "ionice", "stdbuf"):
                argv = _skip_options(argv, with_value={"-n", "-c"})
        elif head in ("sudo", "doas"):
            argv = _skip_options(argv[1:], with_value={"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U"})
        elif head == "env":
            rest = _skip_options(argv[1:], with_value={"-u", "-C", "-S", "--unset", "--chdir"})
            if not rest:
                return argv
            argv = rest
        elif head == "timeout":
            argv = _skip_options(argv[1:], with_value={"-s", "-k", "--signal", "--kill-after"})[1:]
        elif head == "xargs":
            argv = _skip_options(argv[1:], with_value={"-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a"})
        elif head == "runuser" and "--" in argv:
            argv = argv[argv.index("--") + 1 :]
        else:
            return argv
    return argv


def _skip_options(argv: list[str], with_value: set[str]) -> list[str]:
    index = 0
    while index < len(argv) and (argv[index].startswith("-") or _ASSIGNMENT.match(argv[index])):
        if argv[index] == "--":
            return argv[index + 1 :]
        index += 2 if argv[index] in with_value else 1
    return argv[index:]


def _shell_effect(argv: list[str], command: SimpleCommand) -> Effect:
    """`bash -lc '...'` and `bash <<EOF` run a script we can read; `bash -n x.sh` only checks syntax."""
    options = [arg for arg in argv[1:] if arg.startswith("-")]
    if any(option.startswith("-") and not option.startswith("--") and "n" in option for option in options):
        return of_kind(VALIDATION)
    for position, arg in enumerate(argv[1:], start=1):
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg and position + 1 < len(argv):
            return script_effect(argv[position + 1])
    if command.stdin_text is not None and not [arg for arg in argv[1:] if not arg.startswith("-")]:
        return script_effect(command.stdin_text)
    return Effect()


def _operands(args: list[str]) -> list[str]:
    return [arg for arg in args if not arg.startswith("-")]


def _classify(name: str, args: list[str], command: SimpleCommand) -> Effect:
    handler = _HANDLERS.get(name)
    if handler:
        return handler(args, command)
    if name in _WRITERS:
        return write_effect(_operands(args))
    if name in _PATH_CHANGERS:
        paths = [arg for arg in _operands(args) if arg.startswith("/")]
        return Effect() if paths and all(map(is_scratch, paths)) else of_kind(MUTATION)
    if name in _KILLERS:
        return of_kind(LIFECYCLE)
    if name in _SERVICE_CHECKERS:
        return of_kind(VALIDATION)
    if name in _PROBES:
        return of_kind(DISCOVERY)
    return Effect()


def _systemctl(args: list[str], command: SimpleCommand) -> Effect:
    operands, index = [], 0
    while index < len(args):
        arg = args[index]
        if arg in _SYSTEMCTL_OPTIONS_WITH_VALUE:
            index += 1
        elif not arg.startswith("-") or arg in ("--version", "--is-system-running"):
            operands.append(arg)
        index += 1
    verb = operands[0] if operands else "list-units"
    units = {unit for unit in map(unit_name, operands[1:]) if unit}
    if verb in _SYSTEMCTL_PROBES:
        kind = DISCOVERY
    elif verb in _SYSTEMCTL_CHANGES:
        kind = MUTATION
    else:
        kind = LIFECYCLE
    return of_kind(kind, service_units=units)


def _service(args: list[str], command: SimpleCommand) -> Effect:
    operands = _operands(args)
    if len(operands) < 2:
        return of_kind(DISCOVERY)
    unit = unit_name(operands[0])
    kind = DISCOVERY if operands[1] == "status" else LIFECYCLE
    return of_kind(kind, service_units={unit} if unit else set())


def _journalctl(args: list[str], command: SimpleCommand) -> Effect:
    names = []
    for index, arg in enumerate(args):
        if arg in ("-u", "--unit") and index + 1 < len(args):
            names.append(unit_name(args[index + 1]))
        elif arg.startswith("--unit="):
            names.append(unit_name(arg.split("=", 1)[1]))
    return of_kind(DISCOVERY, service_units={name for name in names if name is not None})


def _sqlite3(args: list[str], command: SimpleCommand) -> Effect:
    operands, index = [], 0
    while index < len(args):
        if args[index] in ("-cmd", "-separator", "-nullvalue", "-newline", "-init"):
            index += 1
        elif not args[index].startswith("-"):
            operands.append(args[index])
        index += 1
    database, statements = (operands[0], operands[1:]) if operands else (None, [])
    sql = "\n".join(statements + ([command.stdin_text] if command.stdin_text else []))
    reads_sql_file = any(redirect.operator == "<" for redirect in command.redirects)
    changes = reads_sql_file or any(
        _SQL_CHANGES.match(statement) or statement.lstrip().startswith((".read", ".import", ".restore"))
        for statement in re.split(r";|\n", sql)
    )
    if changes and database:
        return write_effect([database])
    return of_kind(MUTATION if changes else DISCOVERY)


def _python(args: list[str], command: SimpleCommand) -> Effect:
    flags = [arg for arg in args if arg.startswith("-") and arg not in ("-", "-c", "-m")]
    if flags and flags[0] in ("--version", "-V", "-VV"):
        return of_kind(DISCOVERY)
    rest = [arg for arg in args if arg not in flags]
    if not rest or rest[0] == "-":
        return python_snippet_effect(command.stdin_text) if command.stdin_text else Effect()
    if rest[0] == "-c" and len(rest) > 1:
        return python_snippet_effect(rest[1])
    if rest[0] == "-m" and len(rest) > 1:
        return _python_module(rest[1], rest[2:], command)
    if "test" in rest[0].rsplit("/", 1)[-1]:
        return of_kind(VALIDATION)
    return Effect()


def _python_module(module: str, args: list[str], command: SimpleCommand) -> Effect:
    if module in ("py_compile", "compileall", "pytest", "unittest", "doctest", "json.tool", "tabnanny"):
        return of_kind(VALIDATION)
    if module == "pip":
        return _pip(args, command)
    if module == "http.server":
        return of_kind(LIFECYCLE)
    return Effect()


def _pip(args: list[str], command: SimpleCommand) -> Effect:
    verb = next(iter(_operands(args)), "")
    return of_kind(MUTATION if verb in ("install", "uninstall", "download", "wheel") else DISCOVERY)


_PACKAGE_VERBS = {
    **dict.fromkeys(
        (
            "install",
            "remove",
            "purge",
            "upgrade",
            "update",
            "add",
            "del",
            "autoremove",
            "dist-upgrade",
            "i",
            "ci",
            "uninstall",
            "reinstall",
            "build",
        ),
        MUTATION,
    ),
    **dict.fromkeys(("test", "t"), VALIDATION),
    **dict.fromkeys(("start", "restart", "stop"), LIFECYCLE),
}


def _package_manager(args: list[str], command: SimpleCommand) -> Effect:
    """apt/dnf/npm/yarn: installs are mutations, `npm test` (or `npm run test`) a validation."""
    operands = _operands(args)
    verb = operands[1] if operands[:1] == ["run"] and len(operands) > 1 else next(iter(operands), "")
    return of_kind(_PACKAGE_VERBS.get(verb, DISCOVERY))


def _kill(args: list[str], command: SimpleCommand) -> Effect:
    """`kill -0 PID` only asks whether a process exists."""
    return of_kind(DISCOVERY if "-0" in args or "-l" in args else LIFECYCLE)


def _copier(args: list[str], command: SimpleCommand) -> Effect:
    """cp/mv/install/ln write their last operand (or the directory given with -t)."""
    if "-t" in args[:-1]:
        return write_effect([args[args.index("-t") + 1]])
    if any(arg in ("-d", "--directory") for arg in args):
        return write_effect(_operands(args))
    operands = _operands(args)
    return write_effect(operands[-1:]) if len(operands) >= 2 else of_kind(MUTATION)


def _tee(args: list[str], command: SimpleCommand) -> Effect:
    return write_effect(_operands(args), command.stdin_text)


def _sed(args: list[str], command: SimpleCommand) -> Effect:
    if not any(arg.startswith(("-i", "--in-place")) for arg in args):
        return of_kind(DISCOVERY)
    operands = _operands(args)
    has_script_option = any(arg in ("-e", "-f") for arg in args)
    return write_effect(operands if has_script_option else operands[1:])


def _dd(args: list[str], command: SimpleCommand) -> Effect:
    targets = [arg[3:] for arg in args if arg.startswith("of=")]
    return write_effect(targets) if targets else of_kind(DISCOVERY)


def _find(args: list[str], command: SimpleCommand) -> Effect:
    """`find -delete` and `find -exec rm {} \\;` change things; a plain find is a probe."""
    effect = of_kind(MUTATION if "-delete" in args else DISCOVERY)
    for index, arg in enumerate(args):
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((i for i in range(index + 1, len(args)) if args[i] in (";", "+")), len(args))
            effect.merge(command_effect(SimpleCommand(tuple(args[index + 1 : end]))))
    return effect


def _curl(args: list[str], command: SimpleCommand) -> Effect:
    targets = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg in ("-o", "--output", "-D", "--dump-header")]
    return of_kind(VALIDATION).merge(write_effect(targets))


def _node(args: list[str], command: SimpleCommand) -> Effect:
    if args and args[0] in ("--version", "-v"):
        return of_kind(DISCOVERY)
    if any(arg in ("--check", "-c", "--test") for arg in args):
        return of_kind(VALIDATION)
    return Effect()


def _tar(args: list[str], command: SimpleCommand) -> Effect:
    first = args[0] if args else ""
    extracts = any(arg in ("--extract", "--create", "-x", "-c") for arg in args) or (
        not first.startswith("--") and any(flag in first for flag in "xc")
    )
    return of_kind(MUTATION if extracts else DISCOVERY)


def _git(args: list[str], command: SimpleCommand) -> Effect:
    verb = next(iter(_operands(args)), "")
    probes = {"status", "log", "diff", "show", "branch", "remote", "rev-parse", "ls-files", "blame", "--version"}
    return of_kind(DISCOVERY if verb in probes or not verb else MUTATION)


def _mount(args: list[str], command: SimpleCommand) -> Effect:
    return of_kind(MUTATION if len(_operands(args)) >= 2 else DISCOVERY)


def _crontab(args: list[str], command: SimpleCommand) -> Effect:
    return of_kind(DISCOVERY if "-l" in args else MUTATION)


def _sysctl(args: list[str], command: SimpleCommand) -> Effect:
    return of_kind(MUTATION if "-w" in args or any("=" in arg for arg in args) else DISCOVERY)


def _dpkg(args: list[str], command: SimpleCommand) -> Effect:
    changes = {"-i", "--install", "-r", "--remove", "-P", "--purge", "--configure"}
    return of_kind(MUTATION if changes & set(args) else DISCOVERY)


def _make(args: list[str], command: SimpleCommand) -> Effect:
    return of_kind(VALIDATION if {"test", "check"} & set(args) else MUTATION)


def _go(args: list[str], command: SimpleCommand) -> Effect:
    verb = next(iter(_operands(args)), "")
    kinds = {"test": VALIDATION, "vet": VALIDATION, "build": MUTATION, "install": MUTATION, "run": LIFECYCLE}
    return of_kind(kinds.get(verb, DISCOVERY))


def _nginx(args: list[str], command: SimpleCommand) -> Effect:
    if "-t" in args or "-T" in args:
        return of_kind(VALIDATION)
    return of_kind(DISCOVERY if "-v" in args or "-V" in args else LIFECYCLE)


_HANDLERS: dict[str, Callable[[list[str], SimpleCommand], Effect]] = {
    "systemctl": _systemctl,
    "service": _service,
    "kill": _kill,
    "journalctl": _journalctl,
    "sqlite3": _sqlite3,
    "python": _python,
    "pip": _pip,
    "apt": _package_manager,
    "apt-get": _package_manager,
    "dnf": _package_manager,
    "yum": _package_manager,
    "apk": _package_manager,
    "npm": _package_manager,
    "pnpm": _package_manager,
    "yarn": _package_manager,
    "cp": _copier,
    "mv": _copier,
    "install": _copier,
    "ln": _copier,
    "rsync": _copier,
    "tee": _tee,
    "sed": _sed,
    "dd": _dd,
    "find": _find,
    "curl": _curl,
    "wget": _curl,
    "node": _node,
    "nodejs": _node,
    "tar": _tar,
    "git": _git,
    "mount": _mount,
    "crontab": _crontab,
    "sysctl": _sysctl,
    "dpkg": _dpkg,
    "make": _make,
    "go": _go,
    "nginx": _nginx,
}
