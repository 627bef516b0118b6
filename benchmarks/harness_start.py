"""Real harnesses in a TCG guest: time from the agent's start to the harness's first model request, per harness,
with the guest memory each one took at its peak; and the harness bundle's build time and size.

One guest (the First Build class plus the harness headroom, the bundle attached as in a match), one gateway and
one scripted model server on loopback. Each harness is started exactly as in a match (`GuestHarness`: the
bundle mounted, the reverse forward, its configuration, its command line) on a one-line brief; the model answers
its first request with a final text, so each run ends right after it. "Start" is the moment the adapter begins
(mount, forward, configuration included); the bundle's mount is made once by the first harness and reused.

    flock /tmp/aoe-vm.lock .venv/bin/python benchmarks/harness_start.py [--rebuild] [HARNESS ...]

`--rebuild` builds the bundle again (from the npm and PyPI caches when warm) and times it; without it the build
time printed is the one recorded when the cached bundle was built. Needs libvirtd (`scripts/services`), the
guest image (`aoe image build`) and the bundle (`aoe image build --harnesses`, built here when missing).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from aoe_tui.agents.gateway.server import Gateway
from aoe_tui.agents.harnesses import HARNESS_MODULES, RECIPE
from aoe_tui.agents.harnesses.bundle import build_bundle
from aoe_tui.agents.harnesses.runner import GuestHarness
from aoe_tui.agents.openai_harness.main import KeyFiles
from aoe_tui.agents.openai_harness.outputs import RunOutputs
from aoe_tui.agents.openai_harness.scrub import Scrubber
from aoe_tui.agents.openai_harness.settings import HarnessSettings
from aoe_tui.agents.providers import ProviderConfig
from aoe_tui.engine.libvirt_host import HARNESS_MEMORY_MIB
from aoe_tui.runtime.image import require_image
from aoe_tui.runtime.match_runtime import MatchRuntime, TerritorySpec
from aoe_tui.runtime.ssh import GuestSSH
from aoe_tui.testing.model_server import ScriptedModelServer, Turn

CLASS_MEMORY_MIB = 768  # First Build's builder class
MODEL = "arena-model"
BRIEF = "Say that you are ready, and stop."


class NullMeter:
    def refusal(self, agent_id: str, rounds_in_flight: int) -> str | None:
        return None

    def charge(self, agent_id: str, charge: object) -> None:
        pass

    def refused_over_budget(self, agent_id: str, reason: str) -> None:
        pass

    def gateway_failed(self, agent_id: str, detail: str) -> None:
        pass


def settings_for(folder: Path, adapter_id: str, ssh_port: int, keys, gateway: Gateway, token: str) -> HarnessSettings:
    brief = folder / "brief.md"
    brief.write_text(BRIEF)
    return HarnessSettings.from_env(
        {
            "AOE_AGENT_ID": adapter_id,
            "AOE_TERRITORY_ID": "builder-one",
            "AOE_TERRITORY_HOST": "127.0.0.1",
            "AOE_SSH_PORT": str(ssh_port),
            "AOE_MODEL": MODEL,
            "AOE_INSTRUCTION_FILE": str(brief),
            "AOE_RESULT_FILE": str(folder / adapter_id / "result.json"),
            "AOE_USAGE_FILE": str(folder / adapter_id / "usage.json"),
            "AOE_SSH_KEY": str(keys.private_key_path),
            "AOE_KNOWN_HOSTS": str(keys.known_hosts_path),
            "AOE_GATEWAY_URL": gateway.url(adapter_id),
            "AOE_GATEWAY_TOKEN": token,
        }
    )


async def used_mib(harness: GuestHarness) -> int:
    result = await harness.ssh.run("free -m | awk '/^Mem:/ {print $3}'", 30)
    return int(result.stdout.strip() or 0)


async def peak_while(harness: GuestHarness, done: asyncio.Event) -> int:
    peak = 0
    while not done.is_set():
        try:
            peak = max(peak, await used_mib(harness))
        except Exception:  # noqa: BLE001  (a sample lost to a busy guest is just skipped)
            pass
        await asyncio.sleep(0.5)
    return peak


async def one_harness(adapter_id: str, runtime: MatchRuntime, gateway: Gateway, folder: Path) -> dict[str, float]:
    server = ScriptedModelServer(final=Turn(text="Ready.", input_tokens=50, output_tokens=5))
    async with server:
        urls = {"openai": server.openai_base_url, "anthropic": server.base_url, "gemini": server.base_url}
        provider = ProviderConfig("scripted", "sk-bench", urls)
        token = await gateway.add_agent(adapter_id, MODEL, provider, folder / adapter_id)
        vm = runtime.vms["builder-one"]
        settings = settings_for(folder, adapter_id, vm.ssh_port, vm.keys, gateway, token)
        outputs = RunOutputs(settings, Scrubber([]))
        ssh = GuestSSH(
            "builder-one", "127.0.0.1", vm.ssh_port, KeyFiles(vm.keys.private_key_path, vm.keys.known_hosts_path)
        )
        harness = GuestHarness(HARNESS_MODULES[adapter_id], settings, ssh, outputs)
        port = gateway.port(adapter_id)
        started = time.monotonic()
        ctx = harness.context(BRIEF, port)
        await harness.prepare(ctx, port)
        idle = await used_mib(harness)
        done = asyncio.Event()
        sampler = asyncio.ensure_future(peak_while(harness, done))
        run = asyncio.ensure_future(harness.run(ctx))
        while not server.requests and not run.done():
            await asyncio.sleep(0.05)
        first = time.monotonic() - started
        outcome = await run
        done.set()
        peak = await sampler
        await ssh.close()
        if not server.requests:
            raise SystemExit(
                f"{adapter_id}: no model request (exit {outcome.exit_status}: {outcome.stderr_tail[-300:]!r})"
            )
        return {"first_request_s": first, "run_s": time.monotonic() - started, "peak_mib": max(0, peak - idle)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rebuild", action="store_true", help="build the bundle again and time it")
    parser.add_argument("harnesses", nargs="*", default=list(HARNESS_MODULES))
    args = parser.parse_args()
    started = time.monotonic()
    bundle = build_bundle(RECIPE, force=args.rebuild, progress=lambda line: print(f"  {line}", flush=True))
    build_s = time.monotonic() - started if args.rebuild else bundle.build_seconds
    image_mib = bundle.image.stat().st_blocks * 512 / 2**20
    print(
        f"bundle {bundle.recipe_hash}: build {build_s:.0f} s ({'timed now' if args.rebuild else 'as recorded'}), "
        f"{bundle.size_bytes / 2**20:.0f} MiB of files, {image_mib:.0f} MiB on disk",
        flush=True,
    )
    folder = Path(tempfile.mkdtemp(prefix="aoe-harness-start-"))
    spec = TerritorySpec("builder-one", 1, CLASS_MEMORY_MIB + HARNESS_MEMORY_MIB, harness_bundle=bundle.image)
    gateway = Gateway(NullMeter())
    await gateway.start()
    figures: dict[str, dict[str, float]] = {}
    try:
        async with MatchRuntime(folder / "match", "bench-harness-start", [spec], image=require_image()) as runtime:
            print(
                f"guest up in {runtime.boot_seconds.get('builder-one', 0):.0f} s "
                f"({CLASS_MEMORY_MIB} + {HARNESS_MEMORY_MIB} MiB)",
                flush=True,
            )
            for adapter_id in args.harnesses:
                figures[adapter_id] = await one_harness(adapter_id, runtime, gateway, folder)
                f = figures[adapter_id]
                print(
                    f"  {adapter_id:15} first model request {f['first_request_s']:6.1f} s   "
                    f"run {f['run_s']:6.1f} s   guest memory peak +{f['peak_mib']:.0f} MiB",
                    flush=True,
                )
    finally:
        await gateway.close()
        shutil.rmtree(folder, ignore_errors=True)
    print("\nharness         start -> first model request   peak guest memory (MiB)")
    for adapter_id, f in figures.items():
        print(f"{adapter_id:15} {f['first_request_s']:10.1f} s {f['peak_mib']:28.0f}")


if __name__ == "__main__":
    asyncio.run(main())
