"""The shell analyzer against bash itself, and what it says it cannot see.

The property tests run random lines through real bash with recording programs on PATH: every
command bash actually started must be one the analyzer listed (as written, or unwrapped from
`timeout`/`env`/`nice`/`command`/`xargs`/`bash -c`), whenever the analyzer claims it saw the
whole line. The rest pins down the findings the approval prompt shows.
"""

from __future__ import annotations

import os
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from agent_cli.permissions.broker import ApprovalRequest
from agent_cli.permissions.shell_analysis import analyze
from agent_cli.permissions.shell_analysis import analyze as parse_command
from agent_cli.ui.approvals import approval_panel

NAMES = ["aa", "bb", "cc"]
RECORDER = """#!/bin/sh
printf '%s\\037' "$(basename "$0")" "$@" >> "$LOG"
printf '\\036' >> "$LOG"
"""


@pytest.fixture(scope="module")
def recorders(tmp_path_factory):
    bindir = tmp_path_factory.mktemp("bin")
    for name in NAMES:
        path = bindir / name
        path.write_text(RECORDER)
        path.chmod(0o755)
    return bindir


def _ran(line: str, bindir, workdir) -> list[list[str]]:
    log = workdir / "log"
    log.write_bytes(b"")
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "LOG": str(log), "v": "1 2", "HOME": str(workdir)}
    subprocess.run(["bash", "-c", line + "\nwait"], cwd=workdir, env=env, capture_output=True,
                   timeout=20)
    records = log.read_bytes().decode(errors="replace").split("\x1e")[:-1]
    return [r.split("\x1f")[:-1] for r in records]


def _seen(argv: list[str], analysis) -> bool:
    for form in analysis.forms():
        words = list(form.words)
        if form.complete and argv == words:
            return True
        if not form.complete and argv[: len(words)] == words:
            return True
    return False


WORDS = NAMES + ["x", "-y", "'q r'", '"$v"', "$v", "z*", "\\;", '"a b"', "$'x'"]
GLUE = [" ", " ", " ", "; ", " && ", " || ", " | ", " & ", "\n", " $(", ") ", " (", ") ",
        " { ", "; } ", " `", "` ", " timeout 5 ", " env X=1 ", " nice -n 1 ", " command ",
        " bash -c '", "' ", " xargs ", " if ", "; then ", "; fi ", " echo aa | bash "]
pieces = st.lists(st.sampled_from(WORDS) | st.sampled_from(GLUE), min_size=1, max_size=10)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=pieces)
def test_every_command_bash_runs_is_one_the_analyzer_saw(parts, recorders, tmp_path):
    line = "".join(parts).strip()
    analysis = analyze(line)
    if analysis.findings:
        return  # it says it cannot see everything: never auto-allowed under a deny rule
    for argv in _ran(line, recorders, tmp_path):
        assert _seen(argv, analysis), (line, argv, analysis.forms())


# A line we call simple is exactly one command to bash, word for word (no glob, brace or
# tilde characters, so bash's words are exactly its parsed words).
tricky = st.text(alphabet="ab ;&|<>()$`'\"\\#=\n\t{}", min_size=0, max_size=14)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tail=tricky)
def test_a_line_called_simple_is_one_command_to_bash(tail, tmp_path):
    command = "printf '%s\\0' START " + tail
    cmd = analyze(command)
    if not cmd.simple:
        return
    run = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True,
                         timeout=10, env={})
    argv = run.stdout.decode().split("\0")[:-1]
    if run.returncode == 2 and b"syntax error" in run.stderr:
        # bash stops at a later line it cannot parse; what it ran before is still ours
        assert argv in ([], list(cmd.words[2:])), command
        return
    assert run.returncode == 0, (command, run.stderr)
    assert argv == list(cmd.words[2:]), command


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text_is_analyzed_without_crashing(text):
    """Including code points that crash the grammar's scanner when handed to it raw."""
    cmd = analyze(text)
    assert cmd.simple == (cmd.words is not None)


def test_code_points_that_crash_the_grammar_are_read_as_word_bytes():
    for text in ("{\U000f0000!", "{\U000cd4c9!", "{\U0010ffff!"):  # segfaulted tree-sitter-bash
        for _ in range(3):
            analyze(text)
    assert analyze("echo \U000f0000 x").words == ("echo", "\U000f0000", "x")
    assert analyze("echo héllo '中文'").words == ("echo", "héllo", "中文")


# ----- what the rules cannot see --------------------------------------------------------------
@pytest.mark.parametrize(
    ("command", "finding"),
    [
        ("bash -c 'ls'", "`bash -c` runs code the rules cannot see"),
        ("sh -lc 'ls'", "`sh -c` runs code the rules cannot see"),
        ("ls | bash", "`bash` reading its input runs code the rules cannot see"),
        ("bash ./x.sh", "`bash ./x.sh` runs a script the rules cannot see"),
        ("eval ls", "`eval` runs code the rules cannot see"),
        ("trap 'ls' EXIT", "`trap` runs code the rules cannot see"),
        ("source x.sh", "`source` runs a file the rules cannot see"),
        ("python3 -c 'print(1)'", "`python3` given code runs code the rules cannot see"),
        ("node -e 'x'", "`node` given code"),
        ("git -C sub status", "`git -C` before the subcommand changes what git runs"),
        ("git --git-dir=x status", "`git --git-dir`"),
        ("git -c core.pager=x log", "`git -c`"),
        ("git --exec-path=/tmp status", "`git --exec-path`"),
        ("git st", "`git st` is not a git command"),
        ("git config core.pager less", "`git config` changes what later git commands run"),
        ("git rebase -x 'make' main", "`git rebase -x` runs a command"),
        ("git submodule foreach 'ls'", "`git submodule foreach` runs a command"),
        ("$'ls' -l", "decides its command word at run time"),
        ("$(echo ls)", "decides its command word at run time"),
        ("${X}ls", "decides its command word at run time"),
        ("l*s", "decides its command word at run time"),
        ("{ls,-l}", "cannot read"),
        ("PATH=/tmp ls", "setting PATH changes what later commands run"),
        ("export PATH=/tmp; ls", "setting PATH"),
        ("hash -p /bin/rm ls", "`hash` changes what later commands mean"),
        ("timeout --bogus 5 ls", "`timeout --bogus` is an option the rules cannot read past"),
        ("watch ls", "`watch` runs its command through `sh -c`"),
        ("x='a[$(ls)]'; echo $((x))", "arithmetic on anything but a literal number"),
        ("echo ${!name}", "is not one the rules understand"),
        ("awk '{system($0)}' f", "`awk` is given a program that can run commands"),
        ("sed 's/a/b/e' f", "`sed` is given a program that can run commands"),
        ("tar --to-command=sh -xf a.tar", "`tar --to-command` runs a command"),
        ("ssh host ls", "`ssh HOST COMMAND` runs code"),
        ("echo x > .git/hooks/pre-push", "touches a file that decides what later runs"),
        ("cp a sub/.git/config", "touches a file that decides what later runs"),
    ],
)
def test_findings_name_what_the_rules_cannot_see(command, finding):
    reasons = [f.reason for f in analyze(command).findings]
    assert any(finding in r for r in reasons), reasons


@pytest.mark.parametrize(
    "command",
    ["git status", "ls -la", "npm run test -- x", "git --no-pager log -3", "echo 'a | b'",
     "grep -rn 'x;y' src", "cat a.txt | sort | uniq -c", "python3 main.py", "make test",
     "ls 2>&1", "git log > /dev/null", "cd sub && ls", "for f in *.py; do wc -l \"$f\"; done",
     "find . -name '*.py'", "awk '{print $1}' f", "sed -n '1,5p' f", "git commit -m 'x; y'",
     "read -r -p 'Name: ' x", "set -euo pipefail", "printf -v out '%s' x", "declare -a arr",
     "local -r x=1", "[[ -n $x && $y == z ]]", "(( 2 > 1 ))", "echo ${x:-none} ${#y}",
     "git rev-parse --abbrev-ref HEAD", "git log --oneline -n 5 --graph", "tar -czf o.tgz d",
     "ssh -p 2222 -o BatchMode=yes host", "git status -sb", "git diff --stat HEAD~1"],
)
def test_ordinary_commands_have_nothing_hidden(command):
    assert analyze(command).findings == ()


def test_wrappers_are_unwrapped_to_the_command_they_run():
    def inner(command):
        return [(c.words, c.via) for r in analyze(command).runs for c in r.inner]

    assert inner("timeout -s KILL 5 rm -rf x") == [(("rm", "-rf", "x"), "timeout")]
    assert inner("sudo -u root env -i A=1 nice -n 2 rm x")[-1] == (("rm", "x"), "nice")
    assert inner("find . -exec rm {} \\; -exec ls \\;") == [
        (("rm",), "find -exec"), (("ls",), "find -exec")]
    assert inner("git -C . --no-pager push origin") == [
        (("git", "push", "origin"), "git options")]
    assert inner("bash -c 'sudo rm x'")[-1] == (("rm", "x"), "bash -c -> sudo")
    assert (("rm", "x"), "nsenter") in inner("nsenter -t 1 -m rm x")  # every later word tried


def test_commands_in_an_unquoted_here_document_are_seen():
    runs = analyze("cat <<EOF\n$(rm x) `ls`\nEOF").runs
    words = [r.written.words for r in runs]
    assert ("rm", "x") in words
    assert ("ls",) in words or analyze("cat <<EOF\n`ls`\nEOF").findings
    assert analyze("cat <<EOF\n`ls`\nEOF").findings  # the grammar misses it: unreadable


def test_an_allow_rule_may_match_through_transparent_wrappers_only():
    run = analyze("timeout 5 git status").runs[0]
    assert [c.words for c in run.allowable] == [("timeout", "5", "git", "status"),
                                                ("git", "status")]
    run = analyze("sudo git status").runs[0]  # sudo changes who runs it: not transparent
    assert [c.words for c in run.allowable] == [("sudo", "git", "status")]


# ----- the approval prompt says why it asks -----------------------------------------------------
def test_the_approval_panel_shows_why_a_rule_could_not_allow_the_command():
    req = ApprovalRequest(agent="alice", tool="shell", input={"command": "bash -c 'ls'"},
                          summary="bash -c 'ls'",
                          reason="asks because `bash -c` runs code the rules cannot see")
    console = Console(width=100, record=True, color_system=None)
    console.print(approval_panel(req))
    text = console.export_text()
    assert "asks because `bash -c` runs code the rules cannot see" in text
    assert "alice wants to run `bash -c 'ls'`" in text


def test_the_gate_puts_the_reason_on_the_request_the_human_sees(workdir):
    from agent_cli.agent.tool_calls import ToolRunner
    from agent_cli.models.base import ToolUseBlock
    from agent_cli.permissions.broker import ApprovalAnswer
    from agent_cli.runtime import Runtime, RuntimeConfig
    from agent_cli.tools.base import ToolContext, ToolSet
    from agent_cli.tools.workspace import workspace_tools

    rt = Runtime.open(workdir, RuntimeConfig(allow=["Bash(git *)"], deny=["Bash(git push *)"]))
    seen: list[ApprovalRequest] = []

    def answer() -> None:  # runs on the asking thread once the request is queued
        req = rt.broker.next_request(0)
        seen.append(req)
        rt.broker.answer(req.id, ApprovalAnswer("deny", feedback="no"))

    rt.broker.attach_ui(answer)
    runner = ToolRunner("alice", ToolSet(workspace_tools()), rt.gate, lambda e: None,
                        lambda: ToolContext("alice", workdir))
    out = runner.run_one(ToolUseBlock(id="t", name="shell",
                                      input={"command": "git $(echo push) origin"}))
    assert out.is_error and "The user denied" in out.content
    assert seen[0].reason.startswith("asks because `git $(echo push) origin` has words decided")
    assert "Bash(git push *)" in seen[0].reason
    assert rt.audit.entries()[-1]["reason"] == seen[0].reason.removeprefix("asks because ")
    rt.broker.detach_ui()
    assert os.path.exists(workdir / ".team" / "audit.jsonl")


# Deny wins, against bash itself: random lines built around `rm` (a recording program here);
# whenever the policy auto-allows a line under `Bash` + deny `Bash(rm *)`, bash must not
# have started rm.
DENY_PIECES = ["rm", "rm x", "'rm' x", "r\\m", "aa", "x", "$v", '"$v"', "{", "}", "(", ")",
               ";", "&&", "||", "|", "&", "\n", "$(", "`", "'", '"', "\\", "#", "=", "coproc",
               "timeout 5", "env", "nice", "command", "exec", "xargs", "bash -c", "eval",
               "sh", "<<<", "<<EOF", "EOF", "f()", "{ rm; }", "if", "then", "fi", "do", "done",
               "for i in a;", "$'rm'", "${v}", "<(", ">", "2>&1", "time", "!", "[[", "]]"]


@pytest.fixture(scope="module")
def deny_policy(tmp_path_factory):
    from agent_cli.permissions.policy import PermissionPolicy

    d = tmp_path_factory.mktemp("policy")
    return PermissionPolicy(d, allow=["Bash"], deny=["Bash(rm *)"], settings_path=d / "s.json")


@pytest.fixture(scope="module")
def rm_recorder(tmp_path_factory):
    bindir = tmp_path_factory.mktemp("rmbin")
    for name in ("rm", "aa"):
        (bindir / name).write_text(RECORDER)
        (bindir / name).chmod(0o755)
    return bindir


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.sampled_from(DENY_PIECES), min_size=1, max_size=8),
       seps=st.lists(st.sampled_from([" ", "", " "]), min_size=8, max_size=8))
def test_a_line_the_policy_allows_never_starts_a_denied_command(parts, seps, deny_policy,
                                                                rm_recorder, tmp_path):
    line = "".join(p + s for p, s in zip(parts, seps, strict=False)).strip()
    if deny_policy.judge_shell(line).effect != "allow":
        return
    ran = _ran(line, rm_recorder, tmp_path)
    assert not [argv for argv in ran if argv[0] == "rm"], (line, ran)


def test_a_trailing_backslash_is_not_a_simple_command():
    cmd = parse_command("printf '%s\\0' START '\n'\\")
    assert not cmd.simple
    assert "cannot read" in cmd.reason


# Builtin, expansion and option spellings (issue 20): bash evaluating a subscript, a prompt
# transformation, a callback, an abbreviated or clustered option of git/ssh. The payload is
# the recording program `aa`; whenever a policy allows a generated line -- specifier rules
# naming every command used here, or `Bash` with a deny rule on `aa` -- bash must not start it.
SPELL_PREFIX = ["", "x='a[$(aa)]'; ", "x='$(aa)'; ", "y=abc x='a[$(aa)]'; ",
                "declare -a a=(1); ", "f() { aa; }; "]
SPELL_FAMILIES = [  # (commands, words that may follow them)
    (["ls", "printf", "test", "[", "echo", "declare", "local", "typeset", "read", "let",
      "unset", "wait -n", "mapfile", "compgen", "[[", "timeout 5 ls", "env printf"],
     ["-v", "-p", "-C aa", "-c1 -C aa", "-W '$(aa)'", "-aW'$(aa)'", "-F f", "-i",
      "-v 'a[$(aa)]'", "-va'[$(aa)]'", "-p 'a[$(aa)]'", "-i x='a[$(aa)]'", "'a[$(aa)]'",
      '"a[\\$(aa)]"', "'$(aa)'", "${x@P}", "${!x}", "${y:x}", "$((x))", "${a[x]}",
      "'$(aa)' \"${BASH_EXECUTION_STRING@P}\"", "'$(aa)' ${BASH_COMMAND@P}", "-eq 1",
      "1 -lt", "]", "]]", "x", "<<< 1"]),
    (["git rebase HEAD~1", "git grep -e hello", "git difftool -y HEAD~1", "git fetch .",
      "git clone . cl", "git ls-remote .", "git -P grep hello"],
     ["-x aa", "-qx aa", "-qxaa", "--exe=aa", "--ex aa", "-O'aa'", "-iOaa", "-q",
      "--open-files-in-p=aa", "--open=aa", "--upload-pac='aa;'", "--upl='aa;'",
      "-u 'aa;'", "-qu'aa;'", "--exec='aa;'", "--extcmd=aa", "-yx aa", "--ext=aa", "-n"]),
    (["ssh h", "scp h:x ."],
     ["-oProxyCommand=aa", "-o ProxyCommand=aa", "-4oProxyCommand=aa", "-q",
      "-o proxycommand=aa", "-o 'ProxyCommand aa'", "-o BatchMode=yes", "-F evil.conf"]),
    (["timeout 5", "env", "nice -n1", "timeout --sig=KILL 5", "env --split='aa x'"],
     ["aa", "'aa'", "-S aa", "-Saa", "--split-string=aa", "-i", "--", "ls"]),
]
SPELL_RULES = sorted({f"Bash({h.split()[0]} *)" for heads, _ in SPELL_FAMILIES for h in heads}
                     - {"Bash([ *)", "Bash([[ *)", "Bash(timeout *)", "Bash(env *)",
                        "Bash(nice *)"})  # a rule naming a wrapper allows what it runs
spellings = st.sampled_from(SPELL_FAMILIES).flatmap(lambda fam: st.builds(
    lambda pre, head, args, glue: pre + head + " " + "".join(
        a + g for a, g in zip(args, glue, strict=False)).strip(),
    st.sampled_from(SPELL_PREFIX), st.sampled_from(fam[0]),
    st.lists(st.sampled_from(fam[1]), min_size=1, max_size=3),
    st.lists(st.sampled_from([" ", "", " "]), min_size=3, max_size=3),
))


@pytest.fixture(scope="module")
def spelling_policies(tmp_path_factory):
    from agent_cli.permissions.policy import PermissionPolicy

    d = tmp_path_factory.mktemp("spell-policy")
    return (PermissionPolicy(d, allow=SPELL_RULES, settings_path=d / "a.json"),
            PermissionPolicy(d, allow=["Bash"], deny=["Bash(aa *)"], settings_path=d / "b.json"))


@pytest.fixture(scope="module")
def spelling_repo(tmp_path_factory):
    from support.spellings import build_template

    return build_template(tmp_path_factory.mktemp("spell-repo") / "repo")


@settings(max_examples=250, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=spellings)
def test_a_generated_spelling_the_policy_allows_never_starts_the_payload(
        line, spelling_policies, spelling_repo, recorders):
    allowed = [p for p in spelling_policies if p.judge_shell(line).effect == "allow"]
    if not allowed:
        return
    ran = _ran(line, recorders, spelling_repo)
    assert not [argv for argv in ran if argv[0] == "aa"], (line, ran)
