"""The apps-page activity section of the bench (bench/activity.py): it runs on a small
scale against a real PostgreSQL, summarises the person's own activity on both sides,
and its verdict reads the worst ratio."""

from __future__ import annotations

from bench.activity import activity_section
from bench.run import apps_ratio


async def test_the_apps_page_section_measures_both_sides(postgres_admin_url: str) -> None:
    section = await activity_section(postgres_admin_url, rows=2000, rounds=1, count=3)
    rows = [line for line in section if line.startswith("| by ")]
    assert [line.split(" | ")[0] for line in rows] == ["| by user", "| by grant ids"]
    assert "2,000 rows of others' activity" in "\n".join(section)
    worst, met, _ = apps_ratio(section)
    assert worst == max(float(line.rsplit("|", 2)[1]) for line in rows)
    assert met == (worst <= 1.10)
    for line in rows:  # the blocks a summary touches, on either side
        small_blocks, large_blocks = (int(cell) for cell in line.split(" | ")[3:5])
        assert small_blocks > 0 and large_blocks > 0


def test_the_verdict_is_the_worst_ratio() -> None:
    section = ["| by user | 1.00 | 1.05 | 1.05 |", "| by grant ids | 1.00 | 1.20 | 1.20 |", "- Worst ratio: 1.20"]
    assert apps_ratio(section) == (1.2, False, "{:.2f}")
    assert apps_ratio(section[:1])[1] is True
