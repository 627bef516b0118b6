"""The match directory we write, created before anything starts.

`arena.json` and `match.json` go first so even a match that dies while booting
leaves a record of what was attempted; an existing non-empty event log is
never touched, so a typo in `--output` cannot destroy a previous match.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aoe_tui.agents.protocol import AgentFiles, write_json_atomic
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest import AgentSpec, Manifest
from aoe_tui.engine.instructions import render_instruction
from aoe_tui.store.match_layout import MatchLayout


@dataclass(frozen=True)
class MatchDirectory(MatchLayout):
    """The layout (store.match_layout) of a match being written, and the writes that start and end it."""

    def __post_init__(self) -> None:
        # Absolute from the start: libvirtd opens console and disk paths in its own working directory.
        object.__setattr__(self, "root", Path(self.root).absolute())

    def agent_files(self, agent_id: str) -> AgentFiles:
        return AgentFiles(self.agent_directory(agent_id))

    def prepare(self, manifest: Manifest, provenance: dict[str, Any]) -> None:
        if self.events.exists() and self.events.stat().st_size > 0:
            raise AoeError(f"{self.root}: already holds a match (events.jsonl is not empty); choose another --output")
        if self.root.exists() and not self.root.is_dir():
            raise AoeError(f"{self.root}: exists and is not a directory")
        self.root.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.arena, manifest.to_json())
        write_json_atomic(self.provenance, provenance)

    def record_host(self, host: dict[str, Any]) -> None:
        """Add the hypervisor the match ran on (name, URI, CPU model) to `match.json`: provenance, not contest."""
        self.add_provenance({"host": host})

    def add_provenance(self, facts: dict[str, Any]) -> None:
        """Add what the match learnt of its own conditions once its guests were up (the host, the monitors'
        calibrated timeouts) to `match.json`, beside what was known before anything booted."""
        data = json.loads(self.provenance.read_text())
        write_json_atomic(self.provenance, {**data, **facts})

    def write_ports(self, record: dict[str, Any]) -> None:
        write_json_atomic(self.ports, record)

    def write_world(self, world_json: dict[str, Any]) -> None:
        write_json_atomic(self.world, world_json)

    def write_instruction(
        self, manifest: Manifest, manifest_path: Path, agent: AgentSpec, host: str, ssh_port: int
    ) -> Path:
        """Write the agent's instruction (engine.instructions: seat file + contract, or the fog brief)."""
        files = self.agent_files(agent.id)
        files.directory.mkdir(parents=True, exist_ok=True)
        files.instruction.write_text(render_instruction(manifest, manifest_path, agent, host, ssh_port))
        return files.instruction
