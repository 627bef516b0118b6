"""Fog of war on the service map (ARENAS §6): a territory's milestone nodes are "unmapped" until it has had
that milestone evaluated by the scrub time; links show once both ends do. The fog fixture is the published
Traffic Surge match (its arena.json has `[fog_of_war]`): every territory is checked for baseline-ready at
2.0 s and for priority-first-surge from 2.1 s on, and never gets further.

The snapshots draw the match screen's territory panes alone (the real panes of the real session, at two
scrub times), so they change only with what they are about, not with the header, footer or other views.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.containers import Horizontal

from aoe_tui.app.app import AoeApp
from aoe_tui.app.view.hidden_topology import UNMAPPED, as_seen, mapped_nodes, observed_milestones
from aoe_tui.app.view.session import MatchSession
from aoe_tui.app.widgets.service_map_view import ServiceMap
from aoe_tui.app.widgets.territory_pane import TerritoryPane
from aoe_tui.app.view.tool_calls import ToolCallIndex
from aoe_tui.domain import events as ev
from aoe_tui.domain.reducer import reduce
from aoe_tui.store.saved_match import SavedMatch, load_match
from tests.app.app_under_test import SIZE, rendered, replay_app
from tests.fixture_paths import HARNESS, MATCHES

FOG = MATCHES / "traffic-surge-real-20260818-101349"
AOE_CSS = Path(inspect.getfile(AoeApp)).parent / str(AoeApp.CSS_PATH)  # the app's one stylesheet
BASELINE_CHECKED_MS, END = 2_050, None


def _events(*specs: tuple[type, dict]) -> list:
    return [kind(schema_version=1, sequence=i, elapsed_ms=i, **fields) for i, (kind, fields) in enumerate(specs)]


def test_a_node_is_mapped_once_its_territory_had_its_milestone_evaluated_and_links_need_both_ends():
    visualization = load_match(FOG).visualization
    world = reduce(
        _events(
            (ev.MilestoneEvaluationStarted, {"territory": "surge-one", "milestone": "baseline-ready"}),
            (ev.MilestoneRevoked, {"territory": "surge-two", "milestone": "recover-peak", "reason": "gone"}),
        )
    )
    assert observed_milestones(world, "surge-one") == {"baseline-ready"}
    assert observed_milestones(world, "surge-two") == {"recover-peak"}  # a revocation reveals it too
    assert observed_milestones(world, "surge-three") == frozenset()
    one = mapped_nodes(visualization, observed_milestones(world, "surge-one"))
    assert one == {"priority", "service"}  # "priority" has no milestone: always shown
    assert mapped_nodes(visualization, ()) == {"priority"}
    seen = as_seen(visualization, one)
    names = {node.id: node.display_name for node in seen.nodes}
    assert names["service"] == "Surge Service" and names["admission"] == names["host"] == UNMAPPED
    assert [(link.from_, link.to) for link in seen.links] == [("priority", "service")]
    everything = {node.id for node in visualization.nodes}
    assert as_seen(visualization, everything) == visualization


def test_only_a_fog_arena_that_asks_for_it_hides_its_topology():
    fog = load_match(FOG)
    assert fog.hides_topology and not load_match(HARNESS).hides_topology
    fog.manifest.fog_of_war.hide_topology_until_observed = False
    assert not fog.hides_topology


async def test_the_match_screen_hides_what_each_territory_has_not_observed(clock):
    app = replay_app(FOG, clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        maps = list(screen.query(ServiceMap))
        assert len(maps) == 3 and all(m.hides_topology for m in maps)
        screen.playback.go_to_time(BASELINE_CHECKED_MS)
        screen.refresh_cursor()
        await pilot.pause()
        early = rendered(maps[0])
        assert "Surge Service" in early and "Load Boundary" not in early and UNMAPPED in early
        screen.playback.end()
        screen.refresh_cursor()
        await pilot.pause()
        late = rendered(maps[0])
        assert "Load Boundary" in late and "Priority Ledger" not in late and UNMAPPED in late
    async with replay_app(HARNESS, clock).run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert UNMAPPED not in rendered(pilot.app.screen.query_one(ServiceMap))


class PanesAt(App):
    """The match screen's territory panes of one match, shown at one moment (None: its end)."""

    CSS_PATH = AOE_CSS
    CSS = "#panes { layout: horizontal; } TerritoryPane { width: 1fr; }"

    def __init__(self, match: SavedMatch, elapsed_ms: int | None) -> None:
        super().__init__()
        self.session = MatchSession(match)
        self.elapsed_ms = elapsed_ms if elapsed_ms is not None else self.session.timeline.head.elapsed_ms

    def compose(self) -> ComposeResult:
        match, session = self.session.match, self.session
        with Horizontal(id="panes"):
            for territory_id in session.territory_ids():
                agent_id = session.agent_for(territory_id)
                yield TerritoryPane(
                    territory_id,
                    match.agents.get(agent_id) if agent_id else None,
                    session.milestone_ids(),
                    match.visualization,
                    ToolCallIndex([]),
                    0,
                    match.hides_topology,
                )

    def on_mount(self) -> None:
        world = self.session.timeline.state_at_time(self.elapsed_ms)
        standings = world.standings()
        for pane in self.query(TerritoryPane):
            pane.show(world, self.elapsed_ms, self.elapsed_ms, standings.index(pane.territory_id) + 1)


@pytest.mark.parametrize("moment", [BASELINE_CHECKED_MS, END], ids=["baseline-checked-0m02s", "end"])
def test_hidden_topology_snapshot(snap_compare, moment):
    assert snap_compare(PanesAt(load_match(FOG), moment), terminal_size=(180, 30))
