import pytest

from aoe_tui.app.view.service_map import render_service_map
from aoe_tui.store.saved_match import load_match

from tests.fixture_paths import HARNESS, MATCHES

GLYPHS = {"app": "✓", "state": "✗", "systemd": "·", "host": "‖"}


@pytest.mark.parametrize("width", [30, 49, 76])
def test_every_node_is_drawn_and_boxes_never_overlap(width):
    visualization = load_match(HARNESS).visualization
    lines = [line.plain for line in render_service_map(visualization, width, 9, {}, GLYPHS)]
    assert all(len(line) <= width for line in lines)
    # each row of boxes has one top-left corner per node; 5 nodes in total
    assert sum(line.count("╭") for line in lines) == 5
    for line in lines:
        assert "╮╭" not in line and "││" not in line


def test_links_end_in_arrows_and_states_show_as_glyphs():
    visualization = load_match(HARNESS).visualization
    text = "\n".join(line.plain for line in render_service_map(visualization, 60, 9, {}, GLYPHS))
    assert "▶" in text and "◀" in text and "▲" in text
    assert "✓ Application" in text and "✗ State Store" in text and "‖ NixOS Host" in text


def test_node_styles_are_applied_to_the_node_box():
    visualization = load_match(HARNESS).visualization
    lines = render_service_map(visualization, 60, 9, {"app": "$success"}, GLYPHS)
    styled = [span for line in lines for span in line.spans if span.style == "$success"]
    assert len(styled) >= 3  # top, label and bottom rows of the box


def test_larger_maps_fit_too():
    visualization = load_match(MATCHES / "traffic-surge-real-20260818-101349").visualization
    text = "\n".join(line.plain for line in render_service_map(visualization, 60, 12, {}, {}))
    for node in visualization.nodes:
        assert node.display_name[:8] in text
