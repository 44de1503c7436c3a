"""Any path the site cannot serve is a 4xx with a short body, never a 500 or a traceback (`sevenmaps serve`'s
app on loopback, over a lake with a built site): NUL bytes, names over the filesystem's limit, paths over
the site's own length, traversal in every spelling."""

from __future__ import annotations

import httpx
import pytest
from conftest import served_on_loopback

from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.surfaces.serve import make_app


@pytest.fixture
def site_url(tmp_path):
    root = tmp_path / "lake"
    day = root / "site" / "days" / "2026-12-01"
    (day / "servers").mkdir(parents=True)
    (day / "index.html").write_text("<p>the map</p>")
    (day / "servers" / "abc.html").write_text("<p>a server</p>")
    (root / "site" / "current").symlink_to("days/2026-12-01")
    (tmp_path / "secret.txt").write_text("not the site's")
    with served_on_loopback(make_app(LakePaths.at(root)), "the map's server") as url:
        yield url


@pytest.mark.parametrize("path", [
    "/%00", "/servers/abc%00.html", "/" + "a" * 300, "/" + "a/" * 3000, "/servers/" + "b" * 600 + ".html",
    "/%ff%fe", "/..%2f..%2fsecret.txt", "/%2e%2e/%2e%2e/secret.txt", "/../../secret.txt", "/servers/nothing.html",
])
def test_a_path_the_site_cannot_serve_is_a_short_404(site_url, path):
    answer = httpx.get(site_url + path, timeout=30)
    assert answer.status_code == 404 and len(answer.content) < 200 and "Traceback" not in answer.text
    assert "not the site's" not in answer.text


def test_the_sites_own_pages_are_served(site_url):
    assert httpx.get(site_url + "/", timeout=30).text == "<p>the map</p>"
    assert httpx.get(site_url + "/servers/abc.html", timeout=30).text == "<p>a server</p>"
