"""The service map widget: redraws the arena's map at its own size with node states."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from aoe_tui.domain.manifest import Visualization
from aoe_tui.app.view.presentation import MILESTONE_GLYPHS, MILESTONE_STYLES
from aoe_tui.app.view.service_map import render_service_map


MAP_CANVAS_HEIGHT = 9


class ServiceMap(Widget):
    """Holds each node's milestone status; `render` draws for whatever size the layout gives."""

    def __init__(self, visualization: Visualization, **kwargs) -> None:
        super().__init__(**kwargs)
        self.visualization = visualization
        self._statuses: dict[str, str] = {}

    def show(self, milestone_statuses: dict[str, str]) -> None:
        statuses = {
            node.id: milestone_statuses.get(node.milestone, "pending")
            for node in self.visualization.nodes
            if node.milestone
        }
        if statuses != self._statuses:
            self._statuses = statuses
            self.refresh()

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(render_service_map(self.visualization, width, MAP_CANVAS_HEIGHT, {}, {}))

    def render(self) -> Content:
        lines = render_service_map(
            self.visualization,
            self.size.width,
            MAP_CANVAS_HEIGHT,
            node_styles={node: MILESTONE_STYLES[status] for node, status in self._statuses.items()},
            node_glyphs={node: MILESTONE_GLYPHS[status] for node, status in self._statuses.items()},
        )
        return Content("\n").join(lines)
