"""The `--resume` / `/resume` table: a column too narrow for its text ends with "…", so a
reader knows more names (or more of the prompt) are there."""

from __future__ import annotations

from agent_cli.team.sessions import Session, session_table


def test_a_long_team_is_cut_with_an_ellipsis_and_the_columns_stay_aligned() -> None:
    names = ["alice", "bob", "carol", "dave", "erin", "frank"]
    rows = [Session("20260301-120000000-1a2b", "2026-03-01T12:00:00.000Z", team=names),
            Session("20260301-110000000-3c4d", "2026-03-01T11:00:00.000Z", team=["alice"])]
    lines = session_table(rows).splitlines()
    head, long, short = lines[0], lines[1], lines[2]
    start = head.index("TEAM")
    width = head.index("LAST PROMPT") - start - 2
    assert long[start:start + width] == "alice, bob, carol, dave…"
    assert short[start:start + width].rstrip() == "alice"
    assert long.index(" -", start + width) == short.index(" -", start + width)
