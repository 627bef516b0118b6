"""The service map widget: redraws the arena's map at its own size with node states."""

from __future__ import annotations

from collections.abc import Collection

from textual.content import Content
from textual.widget import Widget

from aoe_tui.domain.manifest import Visualization
from aoe_tui.app.view.hidden_topology import as_seen, mapped_nodes
from aoe_tui.app.view.presentation import MILESTONE_GLYPHS, MILESTONE_STYLES
from aoe_tui.app.view.service_map import render_service_map


MAP_CANVAS_HEIGHT = 9
UNMAPPED_GLYPH, UNMAPPED_STYLE = "?", "$text-muted"


class ServiceMap(Widget):
    """Holds each node's milestone status; `render` draws for whatever size the layout gives.

    With `hides_topology` (a fog arena) only what the territory has observed is drawn (view.hidden_topology).
    """

    def __init__(self, visualization: Visualization, hides_topology: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.visualization = visualization
        self.hides_topology = hides_topology
        self._statuses: dict[str, str] = {}
        self._mapped = (
            mapped_nodes(visualization, ()) if hides_topology else frozenset(n.id for n in visualization.nodes)
        )

    def show(self, milestone_statuses: dict[str, str], observed: Collection[str] = ()) -> None:
        """The statuses of the milestones at the cursor and, in a fog arena, which ones were observed by then."""
        statuses = {
            node.id: milestone_statuses.get(node.milestone, "pending")
            for node in self.visualization.nodes
            if node.milestone
        }
        mapped = mapped_nodes(self.visualization, observed) if self.hides_topology else self._mapped  # else: all
        if statuses != self._statuses or mapped != self._mapped:
            self._statuses, self._mapped = statuses, mapped
            self.refresh()

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(render_service_map(self.visualization, width, MAP_CANVAS_HEIGHT, {}, {}))

    def render(self) -> Content:
        shown = {node: status for node, status in self._statuses.items() if node in self._mapped}
        hidden = [node.id for node in self.visualization.nodes if node.id not in self._mapped]
        lines = render_service_map(
            as_seen(self.visualization, self._mapped) if hidden else self.visualization,
            self.size.width,
            MAP_CANVAS_HEIGHT,
            node_styles={
                **{node: MILESTONE_STYLES[status] for node, status in shown.items()},
                **dict.fromkeys(hidden, UNMAPPED_STYLE),
            },
            node_glyphs={
                **{node: MILESTONE_GLYPHS[status] for node, status in shown.items()},
                **dict.fromkeys(hidden, UNMAPPED_GLYPH),
            },
        )
        return Content("\n").join(lines)
