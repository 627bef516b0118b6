"""`aoe image build`, `aoe doctor`, `aoe vm up|ssh|down`: the machine side of aoe.

Thin wrappers: the work lives in aoe_tui.runtime so the engine and the app use
the very same code paths these commands exercise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

from aoe_tui.cli.options import add_uri_option
from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.doctor import is_ready, report_json, run_doctor
from aoe_tui.runtime.host_doctor import check_hosts
from aoe_tui.agents.harnesses import RECIPE
from aoe_tui.agents.harnesses.bundle import build_bundle
from aoe_tui.runtime.image import build_image
from aoe_tui.runtime.image_layer import LAYERS, build_layer
from aoe_tui.runtime.manual_vm import MANUAL_BASE_PORT, vm_down, vm_ssh_argv, vm_up
from aoe_tui.store.hosts_file import read_inventory

_MARKS = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}


def image_build_command(args: argparse.Namespace) -> int:
    if args.harnesses:
        bundle = build_bundle(RECIPE, force=args.force, progress=lambda line: print(line, flush=True))
        print(f"harness bundle {bundle.recipe_hash}: {bundle.image} ({bundle.size_bytes / 2**20:.0f} MiB of harnesses)")
        for adapter_id, spec in bundle.versions.items():
            print(f"  {adapter_id}: {spec}")
        return 0
    if args.layer is not None:
        info = build_layer(LAYERS[args.layer], force=args.force, progress=lambda line: print(line, flush=True))
    else:
        info = build_image(force=args.force, progress=lambda line: print(line, flush=True))
    print(f"kernel {info.kernel}\ninitrd {info.initrd}")
    return 0


def doctor_command(args: argparse.Namespace) -> int:
    if args.hosts is not None:
        checks = asyncio.run(check_hosts(read_inventory(args.hosts)))
    else:
        checks = asyncio.run(run_doctor(args.uri, args.base_port, args.territories, clean=args.clean))
    ready = is_ready(checks)
    if args.json:
        print(json.dumps(report_json(checks), indent=2))
    else:
        for check in checks:
            print(f"[{_MARKS[check.status]}] {check.name}: {check.detail}")
            if check.fix and check.status != "ok":
                print(f"        fix: {check.fix}")
        failed = [check.name for check in checks if check.status == "fail"]
        what = f"every host of {args.hosts}" if args.hosts is not None else "this machine"
        print(f"ready: {what} can run matches" if ready else f"not ready: fix {', '.join(failed)}")
    return 0 if ready else 1


def vm_up_command(args: argparse.Namespace) -> int:
    print(f"booting vm {args.name} ...", flush=True)
    vm, seconds = asyncio.run(vm_up(args.name, args.vcpus, args.memory, args.uri, args.base_port, args.timeout))
    print(f"vm {args.name} answers SSH after {seconds:.0f} s (service port 127.0.0.1:{vm.service_port})")
    print(f"attach: aoe vm ssh {args.name}   or: {vm.ssh_command()}")
    return 0


def vm_ssh_command(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    argv = vm_ssh_argv(args.name, command)
    sys.stdout.flush()
    try:
        os.execvp(argv[0], argv)
    except OSError as error:
        raise AoeError(f"cannot run ssh: {error.strerror}; install it with `apt-get install openssh-client`") from None
    return 0  # not reached: exec replaced this process


def vm_down_command(args: argparse.Namespace) -> int:
    was_running = asyncio.run(vm_down(args.name, purge=args.purge))
    print(
        f"vm {args.name}: {'destroyed' if was_running else 'was not running'}"
        f"{'; disk and keys deleted' if args.purge else '; disk kept for the next `aoe vm up`'}"
    )
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    image = subparsers.add_parser("image", help="the cached guest image")
    image_sub = image.add_subparsers(dest="image_command", required=True, metavar="ACTION")
    build = image_sub.add_parser("build", help="build the Debian guest image (cached; rebuilt when the recipe changes)")
    build.add_argument("--force", action="store_true", help="rebuild even when the cached image is current")
    build.add_argument(
        "--layer",
        choices=sorted(LAYERS),
        help="build an arena's image layer (its packages baked on top of the base image) instead of the base",
    )
    build.add_argument(
        "--harnesses",
        action="store_true",
        help="build the harness bundle instead: the real harnesses of the recipe, by exact version, as a read-only "
        "disk for their guests (also built on first use)",
    )
    build.set_defaults(handler=image_build_command)

    doctor = subparsers.add_parser("doctor", help="check this machine can run matches; each problem with its fix")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.add_argument("--clean", action="store_true", help="destroy leftover aoe-* VMs from crashed runs")
    add_uri_option(doctor)
    doctor.add_argument(
        "--base-port",
        type=int,
        default=None,
        help="check this block of forwarded ports (default: that some free block exists)",
    )
    doctor.add_argument("--territories", type=int, default=3, help="how many territories' ports to check")
    doctor.add_argument(
        "--hosts",
        type=Path,
        default=None,
        metavar="FILE",
        help="check every host of this hosts.toml instead (SSH, libvirt, KVM or TCG, image, capacity)",
    )
    doctor.set_defaults(handler=doctor_command)

    vm = subparsers.add_parser("vm", help="a named guest VM to poke at by hand")
    vm_sub = vm.add_subparsers(dest="vm_command", required=True, metavar="ACTION")
    up = vm_sub.add_parser("up", help="boot the vm (keeps its disk across down/up) and wait for SSH")
    up.add_argument("name")
    up.add_argument("--vcpus", type=int, default=1)
    up.add_argument("--memory", type=int, default=1024, help="MiB")
    add_uri_option(up)
    up.add_argument("--base-port", type=int, default=MANUAL_BASE_PORT, help="search free ports from here")
    up.add_argument("--timeout", type=float, default=240.0, help="seconds to wait for SSH")
    up.set_defaults(handler=vm_up_command)
    ssh = vm_sub.add_parser("ssh", help="open a root shell in the vm (or run COMMAND)")
    ssh.add_argument("name")
    ssh.add_argument("command", nargs=argparse.REMAINDER, help="optional command to run instead of a shell")
    ssh.set_defaults(handler=vm_ssh_command)
    down = vm_sub.add_parser("down", help="power the vm off")
    down.add_argument("name")
    down.add_argument("--purge", action="store_true", help="also delete its disk, keys and state")
    down.set_defaults(handler=vm_down_command)
