"""The spellings table (shell_spellings.toml), run for real: no spelling reaches its payload
through the gate under a deny rule, an ask rule (headless), a specifier allow rule, or
bypassPermissions with a deny rule -- `victim` stays on disk, unchanged, and no `marker`
appears. A calibration run with no gate shows every `lines` entry really bites, so the
table cannot hold by accident; the ordinary commands users allow still ride their rules.
"""

from __future__ import annotations

import pytest
from support.spellings import CONFIGS, Gate, Spelling, build_template, fixture, held, load, run_bare

SPELLINGS = load()
ORDINARY = [  # (allow rule, command that must run under it, headless)
    ("Bash(git status)", "git status"),
    ("Bash(git log *)", "git log --oneline"),
    ("Bash(git *)", "git log --oneline -1 --stat"),
    ("Bash(git *)", "git diff HEAD~1 --stat"),
    ("Bash(git *)", "git show --name-only HEAD"),
    ("Bash(git *)", "git branch -a"),
    ("Bash(git *)", "git status --short --branch"),
    ("Bash(git *)", "git grep -n hello"),
    ("Bash(git *)", "git rev-parse --abbrev-ref HEAD"),
    ("Bash(git *)", "git log --graph --oneline --all -n 5"),
    ("Bash(git *)", "git submodule update --init --recursive"),
    ("Bash(git *)", "git config --get user.name"),
    ("Bash(ls *)", "ls -la"),
    ("Bash(python3 -m pytest *)", "python3 -m pytest -q --co"),
    ("Bash(npm test)", "npm test"),
    ("Bash(git *)", "timeout 60 git status"),
    ("Bash(ls *)", "ls *.txt"),
    ("Bash(find *)", "find . -name '*.txt' -type f"),
    ("Bash(tar *)", "tar tf archive.tar"),
    ("Bash(printf *)", "printf '%s\\n' hello"),
    ("Bash(test *)", "test -f f.txt"),
]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return build_template(tmp_path_factory.mktemp("spellings") / "template")


@pytest.fixture(scope="module")
def gate(tmp_path_factory):
    g = Gate(tmp_path_factory.mktemp("runtimes"))
    yield g
    g.close()


def test_the_table_is_big_enough_and_has_no_duplicates():
    lines = [s.line for s in SPELLINGS]
    assert len(lines) >= 150
    assert len(set(lines)) == len(lines)


@pytest.mark.parametrize("spelling", [s for s in SPELLINGS if s.bites], ids=lambda s: s.id)
def test_without_a_gate_the_spelling_really_bites(spelling: Spelling, template, tmp_path):
    where = fixture(template, tmp_path / "bare")
    run_bare(spelling.line, where)
    assert not held(where), spelling.line


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("spelling", SPELLINGS, ids=lambda s: s.id)
def test_no_spelling_reaches_its_payload(spelling: Spelling, config, gate, template, tmp_path):
    where = fixture(template, tmp_path / "fx")
    decision, ok = gate.run(config, spelling, where)
    assert ok, (config, decision, spelling.line)
    if spelling.bites:  # it would have bitten: so the gate must have refused it
        assert decision == "deny", (config, spelling.line)


@pytest.mark.parametrize(("rule", "command"), ORDINARY)
def test_ordinary_commands_still_ride_their_allow_rules(rule, command, gate, template, tmp_path):
    where = fixture(template, tmp_path / "fx")
    decision, ok = gate.run("allow", Spelling("ordinary", command, rule, False), where)
    assert (decision, ok) == ("allow", True), command


@pytest.mark.parametrize(("config", "line", "why"), [
    ("allow", "git rebase --exe='rm victim' HEAD~1", "`git rebase --exec` runs a command"),
    ("allow", "git grep -iO'rm victim' hello", "`git grep -O` runs a command"),
    ("deny", "ssh -4oProxyCommand='rm victim' h", "`ssh -o ProxyCommand=rm victim` is not"),
    ("ask", "printf -v 'a[$(rm victim)]' x", "`printf -v a[$(rm victim)]` names a variable"),
    ("bypass", "mapfile -tC 'rm victim' -c 1 x <<< 1", "`mapfile -C` hands `rm victim`"),
])
def test_a_refusal_names_what_was_not_understood(config, line, why, gate, template, tmp_path):
    spelling = Spelling("reason", line, "Bash(git *)", True)
    decision, ok = gate.run(config, spelling, fixture(template, tmp_path / "fx"))
    assert (decision, ok) == ("deny", True)
    entry = gate.runtime(config, spelling.allow).audit.entries()[-1]
    assert why in entry["reason"], entry
