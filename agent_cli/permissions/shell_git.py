"""git on a permission rule's terms: the subcommand behind git's global options.

`git -C . push` is `git push` to a deny rule `Bash(git push *)`: `git_step` strips the global
options before the subcommand and hands back the plain form. Options that change which
repository, configuration or programs git uses (`-C`, `-c`, `--git-dir`, `--work-tree`,
`--exec-path`, ...) are findings: never auto-allowed while a deny rule exists. So are a
subcommand git does not ship (an alias or a `git-foo` program runs what its config says),
`git config` writes (they decide what later git commands run) and options that make git run
a command (`rebase --exec`, `bisect run`, `submodule foreach`, `--upload-pack`, ...).
"""

from __future__ import annotations

from .shell_git_options import GIT_TABLES
from .shell_model import Command, Finding
from .shell_tables import walk

HARMLESS_GLOBALS = frozenset(
    "--no-pager -P -p --paginate --no-replace-objects --literal-pathspecs --glob-pathspecs "
    "--noglob-pathspecs --icase-pathspecs --no-optional-locks --no-advice --no-lazy-fetch".split()
)
GLOBALS_WITH_VALUE = frozenset(
    "-C -c --git-dir --work-tree --namespace --exec-path --config-env --super-prefix "
    "--attr-source --list-cmds".split()
)
NO_COMMAND = frozenset({"--version", "--help", "-v", "-h", "--html-path", "--man-path",
                        "--info-path"})
BUILTINS = frozenset(
    "add am annotate apply archive backfill bisect blame branch bugreport bundle cat-file "
    "check-attr check-ignore check-mailmap check-ref-format checkout checkout-index cherry "
    "cherry-pick citool clean clone column commit commit-graph commit-tree config "
    "count-objects credential describe diagnose diff diff-files diff-index diff-tree "
    "difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg "
    "for-each-ref for-each-repo format-patch fsck gc get-tar-commit-id grep gui hash-object "
    "help index-pack init interpret-trailers log ls-files ls-remote ls-tree maintenance merge "
    "merge-base merge-file merge-tree mergetool mktag mktree multi-pack-index mv name-rev "
    "notes pack-objects pack-refs prune pull push range-diff read-tree rebase reflog refs "
    "remote repack replace replay rerere reset restore rev-list rev-parse revert rm "
    "send-email shortlog show show-branch show-ref sparse-checkout stash status stripspace "
    "submodule switch symbolic-ref tag unpack-objects update-index update-ref "
    "verify-commit verify-pack verify-tag version whatchanged worktree write-tree var".split()
)
CODE_SUBCOMMANDS = {("submodule", "foreach"), ("bisect", "run")}
CONFIG_READS = frozenset(
    "--get --get-all --get-regexp --get-urlmatch --list -l --show-origin --show-scope "
    "--name-only get list".split()
)


def _strict(reason: str) -> Finding:
    """Whatever git does past what its tables state is never covered by an allow rule."""
    return Finding(reason, True)


def _globals(cmd: Command, findings: list[Finding]) -> tuple[int, bool] | None:
    """(index of the subcommand, only harmless options seen); None if nothing runs."""
    words, i, harmless = cmd.words, 1, True
    while i < len(words) and words[i].startswith("-"):
        w = words[i]
        name = w.split("=", 1)[0]
        if w in NO_COMMAND:
            return None
        if w in HARMLESS_GLOBALS:
            i += 1
            continue
        harmless = False
        if name in GLOBALS_WITH_VALUE or (len(w) > 2 and w[:2] in ("-C", "-c")):
            findings.append(_strict(f"`git {name}` before the subcommand changes what git runs"))
            takes_next = "=" not in w and w in GLOBALS_WITH_VALUE and w != "--exec-path"
            i += 2 if takes_next else 1
            continue
        findings.append(_strict(f"`git {w}` is a global option the rules cannot read past"))
        i += 1
    return i, harmless


def _subcommand(sub: str, args: tuple[str, ...], findings: list[Finding],
                code: list[tuple[str, str]]) -> None:
    if sub not in BUILTINS:
        findings.append(
            _strict(f"`git {sub}` is not a git command (an alias or git-{sub} runs unseen code)")
        )
        return
    if sub == "config":
        writes = [a for a in args if not a.startswith("-")]
        if not any(a in CONFIG_READS for a in args) and (len(writes) != 1 or len(args) > 1):
            findings.append(_strict("`git config` changes what later git commands run"))
    action = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
    if action is not None and (sub, args[action]) in CODE_SUBCOMMANDS:  # after any option
        findings.append(_strict(f"`git {sub} {args[action]}` runs a command the rules cannot "
                                "see"))
        code.append((f"git {sub} {args[action]}", " ".join(
            a for a in args[action + 1 :] if not a.startswith("-"))))
    if sub == "filter-branch":
        findings.append(_strict("`git filter-branch` runs filters the rules cannot see"))
    _options(sub, args, findings, code)


def _options(sub: str, args: tuple[str, ...], findings: list[Finding],
             code: list[tuple[str, str]]) -> None:
    """Every option of `git SUB` must be one its table states (shell_git_options)."""
    tbl = GIT_TABLES.get(sub)
    if tbl is None:
        bad = next((a for a in args if a.startswith("-") and a != "--"), None)
        if bad is not None:
            findings.append(_strict(f"`git {sub} {bad}`: the rules have no option table for "
                                    f"`git {sub}`"))
        return
    walked = walk(args, tbl)
    if walked.problem:
        findings.append(_strict(f"`git {sub}`: {walked.problem}"))
    for opt, value in walked.runs(tbl):
        findings.append(_strict(f"`git {sub} {opt}` runs a command the rules cannot see"))
        if value:
            code.append((f"git {sub} {opt}", value))


def git_step(
    cmd: Command, findings: list[Finding], code: list[tuple[str, str]]
) -> list[tuple[Command, bool]]:
    """The plain `git SUBCOMMAND ...` form behind the global options (and whether an allow
    rule may match it in place of what was written), with findings and code recorded."""
    found = _globals(cmd, findings)
    if found is None:
        return []
    i, harmless = found
    words = cmd.words
    if i >= len(words):
        return []  # `git` alone, or a subcommand decided at run time (possible matches)
    _subcommand(words[i], words[i + 1 :], findings, code)
    if i == 1:
        return []  # already plain
    plain = ("git", *words[i:])
    return [(Command(plain, cmd.complete, " ".join(plain), via="git options"), harmless)]
