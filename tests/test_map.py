"""`acervo map` in a real browser (Debian's Chromium, driven by Playwright): the page opens offline with no request
beyond its own file, draws the top level, opens a community to its sub-communities and members, shows each report
line's cited chunk and document as the index holds them, finds an entity by name, and lists the communities."""

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from playwright.sync_api import Page, sync_playwright

from acervo.flows.cli import main
from acervo.flows.index import publish
from acervo.pipelines.export.community_map import SHOWN
from acervo.pipelines.settings import Settings
from conftest import SAMPLE

pytestmark = pytest.mark.slow  # starts a browser (Chromium, through Playwright)

BROWSERS = ("chromium", "chromium-browser", "google-chrome")  # .ci/browser installs the first


@pytest.fixture(scope="module")
def mapped(tmp_path_factory) -> tuple[Path, Path]:
    """The 2Wiki sample indexed with titles as entities, communities split above 3 members, and its map."""
    folder = tmp_path_factory.mktemp("map")
    db = folder / "w.duckdb"
    publish(SAMPLE, db, Settings(mentions="titles", max_cluster_size=3))
    assert main(["map", "--db", str(db), "--out", str(folder / "map.html")]) == 0
    return db, folder / "map.html"


@pytest.fixture(scope="module")
def browser():
    path = next((found for name in BROWSERS if (found := shutil.which(name))), None)
    assert path, "no Chromium on the PATH: .ci/browser installs Debian's (the README's test command runs it)"
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser, mapped) -> Page:
    """The map opened in a new page that records every request it makes and every script error."""
    opened = browser.new_page(viewport={"width": 1400, "height": 900})
    opened.requests, opened.errors = [], []
    opened.on("request", lambda request: opened.requests.append(request.url))
    opened.on("pageerror", lambda error: opened.errors.append(str(error)))
    opened.goto(mapped[1].as_uri())
    opened.wait_for_selector("body[data-ready='1']")
    yield opened
    assert opened.errors == []
    assert opened.requests == [mapped[1].as_uri()]  # nothing but its own file: it works offline
    opened.close()


def stored(db: Path, query: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(query).fetchall()


def test_the_overview_draws_the_largest_top_level_communities(page: Page, mapped, tmp_path: Path):
    top = stored(mapped[0], "select count(*) from communities where level = 0")[0][0]
    assert page.locator("#map .community").count() == min(top, SHOWN)
    shot = tmp_path / "map-overview.png"
    page.screenshot(path=shot)
    print(f"map screenshot: {shot}")


def test_a_community_opens_to_its_sub_communities_then_members_with_its_report_and_cited_chunks(page: Page, mapped):
    db = mapped[0]
    parent, title, n_children = stored(db, "select p.community_id, p.title, count(*) from communities c join "
                                           "communities p on p.community_id = c.parent_id group by all "
                                           "order by 3 desc, 1 limit 1")[0]
    page.locator(f"#map .community[data-id='{parent}']").click()
    page.wait_for_selector("#panel h2")
    assert page.locator("#panel h2").inner_text() == title
    assert page.locator("#map .community").count() == n_children
    child, child_title = stored(db, f"select community_id, title from communities where parent_id = '{parent}' "
                                    "order by community_id limit 1")[0]
    page.locator(f"#map .community[data-id='{child}']").click()
    page.wait_for_function(f"document.querySelector('#panel h2').textContent === {json.dumps(child_title)}")
    assert page.locator("#crumbs a").all_inner_texts()[1:] == [title[:30], child_title[:30]]
    members = stored(db, f"select count(*) from community_members where community_id = '{child}'")[0][0]
    assert page.locator("#map .member").count() == members
    lines = stored(db, f"select l.text, c.text, d.title from report_lines l join chunks c on c.chunk_id = "
                       f"l.evidence_ref join documents d using (doc_id) where l.community_id = '{child}' "
                       "order by l.ord")
    assert page.locator("#panel .line > div").all_inner_texts() == [text for text, _, _ in lines]
    page.locator("#panel details summary").first.click()
    assert page.locator("#panel details blockquote").first.inner_text() == lines[0][1]
    assert page.locator("#panel details summary").first.inner_text().startswith(lines[0][2])
    page.locator("#crumbs a").first.click()
    page.wait_for_selector("#map .community")
    assert page.locator("#map .member").count() == 0


def test_an_entity_found_by_name_opens_in_its_deepest_community(page: Page, mapped):
    page.fill("#search", "waldrada")
    page.locator("#results li").first.click()
    page.wait_for_selector("#map .member.found")
    assert page.locator("#map .member.found title").text_content().startswith("Waldrada of Lotharingia")


def test_the_table_lists_every_community_of_a_level(page: Page, mapped):
    page.click("#view-table")
    top = stored(mapped[0], "select count(*) from communities where level = 0")[0][0]
    assert page.locator("#table tbody tr").count() == min(top, 500)
    page.select_option("#table-level", "1")
    below = stored(mapped[0], "select count(*) from communities where level = 1")[0][0]
    assert page.locator("#table tbody tr").count() == below
    page.fill("#table-filter", "lothair")
    assert all("lothair" in row.lower() for row in page.locator("#table tbody tr").all_inner_texts())
