"""What a command runs in turn: wrappers unwrapped, code handed to shells and interpreters.

`unwrap(cmd, stdin_code)` returns the commands `cmd` starts through wrappers (`timeout 5 rm
x` runs `rm x`; `find -exec`, `xargs`, `sudo`, `env`, ...), the code strings it hands to a
shell (`bash -c`, `eval`, `trap`, `watch`, `su -c`, a shell reading a here-string) for the
caller to read in turn, and findings: what the rules cannot see (a script file, `python -c`,
an option of a wrapper this table does not know, git's global options before the
subcommand). The table is explicit; a wrapper spelled with options it does not know yields
a finding and every later word as a possible command, so deny rules still catch `rm`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

from .shell_git import git_step
from .shell_model import Command, Finding
from .shell_options import Opts, opts, skip_options
from .shell_proof import problems

MAX_UNWRAP = 12
WRAPPERS: dict[str, Opts] = {
    "timeout": opts("ks", "v", "kill-after signal", "preserve-status foreground verbose",
                    positionals=1, transparent=True),
    "nice": opts("n", "", "adjustment", "", numeric=True, transparent=True),
    "nohup": opts(transparent=True),
    "time": opts("fo", "apvq", "format output", "append portability verbose quiet",
                 transparent=True),
    "stdbuf": opts("ioe", "", "input output error", "", transparent=True),
    "ionice": opts("cnp", "t", "class classdata pid", "ignore", stop="-p --pid",
                   transparent=True),
    "chrt": opts("T", "abdefiormRv", "sched-runtime", "all-tasks batch deadline fifo idle "
                 "other rr reset-on-fork max pid verbose", positionals=1, stop="-p --pid",
                 transparent=True),
    "taskset": opts("", "acp", "", "all-tasks cpu-list pid", positionals=1,
                    stop="-p --pid", transparent=True),
    "setsid": opts("", "cfw", "", "ctty fork wait", transparent=True),
    "unbuffer": opts("", "p", transparent=True),
    "chronic": opts("", "ev", transparent=True),
    "command": opts("", "pvV", transparent=True),
    "builtin": opts(transparent=True),
    "exec": opts("a", "cl", transparent=True),
    "env": opts("uCS", "i0v", "unset chdir split-string default-signal ignore-signal "
                "block-signal", "ignore-environment null debug list-signal-handling",
                code="-S --split-string", assigns=True),
    "sudo": opts("ugpCDrtUhTRg", "AbEHknPSBNKlve", "user group prompt close-from chdir role "
                 "type other-user host command-timeout chroot", "askpass background "
                 "preserve-env set-home non-interactive preserve-groups stdin bell "
                 "reset-timestamp remove-timestamp shell login list validate edit",
                 stop="-l --list -v --validate -e --edit -K", shell="-s --shell -i --login"),
    "doas": opts("uC", "nLs", shell="-s"),
    "xargs": opts("aEdILnPs", "0prtx", "arg-file delimiter eof replace max-lines max-args "
                  "max-procs max-chars process-slot-var", "null no-run-if-empty verbose "
                  "interactive exit show-limits open-tty", attached="eil"),
    "flock": opts("wEc", "sxunoeFv", "timeout conflict-exit-code command", "shared exclusive "
                  "unlock nonblock nb close no-fork verbose", positionals=1,
                  code="-c --command"),
    "watch": opts("nq", "bcegtpwxCr", "interval equexit", "beep color no-color chgexit "
                  "errexit exec no-title precise no-wrap differences no-linewrap",
                  attached="d"),
    "busybox": opts(),
    "strace": opts("abeEIoOpPsSuUX", "cCdDfFhiknqrtTvVwxyZz"),
    "ltrace": opts("aAeFlnopsuDx", "bcCfhiLrStTV"),
    "chroot": opts("", "", "userspec groups skip-chdir", "", positionals=1),
    "fakeroot": opts("lsib", "u", "lib faked", "unknown-is-real"),
    "script": opts("cEItTBOm", "aefqk", "command echo log-in log-out log-timing timing "
                   "log-io output-limit", "append return flush force quiet", code="-c --command"),
}
OPAQUE_RUNNERS = frozenset(
    "coproc nsenter unshare systemd-run firejail bwrap proot run-one parallel sem caffeinate "
    "dbus-run-session catchsegv valgrind gdb rr perf".split()
)
SHELLS = frozenset("bash sh zsh dash ksh mksh ash yash posh rbash fish tcsh csh".split())
SHELL_ARG_OPTS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
INTERPRETERS = {  # name -> the flags that take inline code
    "perl": "eEMm", "ruby": "e", "node": "ep", "nodejs": "ep", "bun": "e", "deno": "",
    "php": "rBRE", "lua": "e", "luajit": "e", "Rscript": "e", "julia": "e", "tclsh": "",
    "osascript": "e", "pwsh": "c", "powershell": "c", "python": "c",
}
INTERPRETER_ARGS = {"python": "WX", "perl": "ID", "ruby": "IC", "node": "", "php": "cdz"}
PYTHON_RE = re.compile(r"^(python|pypy)[0-9.]*$")
AWKS = frozenset("awk gawk mawk nawk".split())
SED_E_RE = re.compile(r"(^|[;{}\n0-9$/!])\s*e(\s|;|}|$)|s(.).*\3.*\3[gpiImM0-9w]*e")
CODE_OPTIONS = {  # options that make a common tool run a command
    "tar": ("--to-command", "--checkpoint-action", "--use-compress-program", "-I",
            "--info-script", "--new-volume-script", "-F", "--rmt-command", "--rsh-command"),
    "rsync": ("-e", "--rsh", "--rsync-path"),
    "zip": ("-TT", "--unzip-command"),
    "vim": ("-c", "--cmd", "+"), "vi": ("-c", "--cmd", "+"), "nvim": ("-c", "--cmd", "+"),
    "man": ("-P", "--pager", "-H"),
    "ssh": ("-o", "-oProxyCommand", "-oLocalCommand"),
    "scp": ("-S", "-o"),
    "less": ("+",),
}
SSH = opts("BbcDEeFIiJLlmOopQRSWw", "46AaCfGgKkMNnqsTtVvXxYy")


@dataclass
class Unwrapped:
    inner: list[Command] = field(default_factory=list)  # deny rules see every one
    allowable: list[Command] = field(default_factory=list)  # an allow rule may match these
    code: list[tuple[str, str]] = field(default_factory=list)  # (via, code text)
    suffixes: list[Command] = field(default_factory=list)  # possible commands past an option
    findings: list[Finding] = field(default_factory=list)


def name_of(cmd: Command) -> str:
    return os.path.basename(cmd.words[0]) if cmd.words else ""


def _rest(cmd: Command, start: int, via: str, *, complete: bool | None = None) -> Command:
    words = cmd.words[start:]
    done = cmd.complete if complete is None else complete
    return Command(words, done, " ".join(words) if words else cmd.shown, via=via)


def _suffixes(cmd: Command, start: int, via: str) -> list[Command]:
    """Every later word as a possible command word: when we cannot tell where it starts."""
    return [
        _rest(cmd, i, via) for i in range(start, len(cmd.words)) if not cmd.words[i].startswith("-")
    ]


def _wrapper(cmd: Command, name: str, spec: Opts, out: Unwrapped) -> Command | None:
    sk = skip_options(cmd.words, spec)
    out.code += [(f"{name} {opt}", code) for opt, code in zip(sk.seen, sk.code, strict=False)]
    if sk.code:
        out.findings.append(Finding(f"`{name} {sk.seen[-1]}` runs code the rules cannot see"))
    if sk.unknown:
        out.findings.append(
            Finding(f"`{name} {sk.unknown}` is an option the rules cannot read past")
        )
        out.suffixes += _suffixes(cmd, sk.index, f"{name} (after {sk.unknown})")
        return None
    if sk.stopped:
        return None
    for var in sk.assigned:
        if var in ("PATH", "LD_PRELOAD", "LD_LIBRARY_PATH") or var.startswith(("GIT_", "BASH")):
            out.findings.append(Finding(f"`{name} {var}=...` changes what the command runs"))
    if sk.index >= len(cmd.words):
        if cmd.complete:
            return None if name != "xargs" else Command(("echo",), False, "echo", via=name)
        return Command((), False, cmd.shown, via=name)
    if sk.to_shell:
        out.findings.append(Finding(f"`{name} {sk.seen[-1]}` hands the command to a shell"))
        out.code.append((f"{name} {sk.seen[-1]}", " ".join(cmd.words[sk.index :])))
    if name == "watch" and "-x" not in sk.seen and "--exec" not in sk.seen:
        out.findings.append(Finding("`watch` runs its command through `sh -c`"))
        out.code.append(("watch", " ".join(cmd.words[sk.index :])))
        return None
    if name == "flock" and cmd.words[sk.index] in ("-c", "--command"):  # flock FILE -c CODE
        out.findings.append(Finding("`flock -c` runs code the rules cannot see"))
        out.code += [("flock -c", w) for w in cmd.words[sk.index + 1 : sk.index + 2]]
        return None
    if name == "flock" and cmd.words[sk.index - 1].isdigit() and sk.index == len(cmd.words):
        return None
    if name == "xargs":
        return _xargs(cmd, sk.index, sk.seen)
    return _rest(cmd, sk.index, name)


def _xargs(cmd: Command, start: int, seen: list[str]) -> Command:
    """xargs appends words from its input: never complete; `-I R` words are replaced."""
    words = cmd.words[start:]
    replace_str = None
    for i, w in enumerate(cmd.words[:start]):
        if w in ("-I", "--replace") and i + 1 < start:
            replace_str = cmd.words[i + 1]
        elif w.startswith("-I") and len(w) > 2:
            replace_str = w[2:]
        elif w.startswith(("-i", "--replace")):
            replace_str = w.partition("=")[2] or w[2:] or "{}"
    if replace_str:
        cut = next((i for i, w in enumerate(words) if replace_str in w), len(words))
        words = words[:cut]
    del seen
    return Command(words, False, " ".join(words), via="xargs")


def _shell(cmd: Command, name: str, stdin_code: str | None, out: Unwrapped) -> None:
    words, i, code_mode = cmd.words, 1, False
    while i < len(words):
        w = words[i]
        if w in ("--", "-"):
            i += 1
            break
        if w in SHELL_ARG_OPTS:
            i += 2
            continue
        if w.startswith(("-", "+")) and len(w) > 1:
            code_mode = code_mode or (not w.startswith("--") and "c" in w[1:])
            i += 1
            continue
        break
    if code_mode:
        out.findings.append(Finding(f"`{name} -c` runs code the rules cannot see"))
        if i < len(words):
            out.code.append((f"{name} -c", words[i]))
    elif i < len(words):
        out.findings.append(Finding(f"`{name} {words[i]}` runs a script the rules cannot see"))
    elif not cmd.complete:
        out.findings.append(Finding(f"`{name}` is given code decided at run time"))
    else:
        out.findings.append(Finding(f"`{name}` reading its input runs code the rules cannot see"))
        if stdin_code is not None:
            out.code.append((f"| {name}", stdin_code))


def _interpreter(cmd: Command, name: str, out: Unwrapped) -> None:
    """`python -c`, `perl -e`, `node -e`, code on stdin: findings. A script file is not:
    what a program does once it runs is its own business (see the README)."""
    key = "python" if PYTHON_RE.match(name) else name
    code_flags, arg_flags = INTERPRETERS[key], INTERPRETER_ARGS.get(key, "")
    rest = cmd.words[1:]
    if cmd.complete and len(rest) == 1 and rest[0] in ("--version", "-V", "-v", "--help", "-h"):
        return
    i = 0
    while i < len(rest):
        w = rest[i]
        if w == "-":
            break
        if w.startswith("--"):
            if w[2:].split("=")[0] in ("eval", "print", "command", "require", "import"):
                break
        elif w.startswith("-") and len(w) > 1:
            if any(c in code_flags for c in w[1:]):
                break
            if w[1] in arg_flags and len(w) == 2:
                i += 1
            if key == "python" and w == "-m":
                return
        else:
            return
        i += 1
    out.findings.append(Finding(f"`{name}` given code runs code the rules cannot see"))


def _awk_sed(cmd: Command, name: str, out: Unwrapped) -> None:
    words = cmd.words[1:]
    if any(w.startswith("-f") or w.startswith("--file") for w in words):
        out.findings.append(Finding(f"`{name} -f` runs a program file the rules cannot see"))
        return
    program = " ".join(words)
    if name in AWKS:
        risky = "system" in program or "|" in program or "getline" in program
    else:
        risky = bool(SED_E_RE.search(program))
    if risky or not cmd.complete:
        out.findings.append(Finding(f"`{name}` is given a program that can run commands"))


def _find(cmd: Command, out: Unwrapped) -> list[Command]:
    words = cmd.words
    found: list[Command] = []
    i = 1
    while i < len(words):
        if words[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            start = i + 1
            end = start
            while end < len(words) and words[end] not in (";", "+"):
                end += 1
            inner = words[start:end]
            cut = next((k for k, w in enumerate(inner) if "{}" in w), len(inner))
            done = cut == len(inner) and (end < len(words) or cmd.complete)
            found.append(
                Command(inner[:cut], done, " ".join(inner) or cmd.shown, via=f"find {words[i]}")
            )
            i = end + 1
            continue
        i += 1
    if not cmd.complete:
        out.findings.append(Finding("`find` has words decided at run time (-exec unseen)"))
    return found


def _code_options(cmd: Command, name: str, out: Unwrapped) -> None:
    for w in cmd.words[1:]:
        for opt in CODE_OPTIONS[name]:
            if w == opt or (w.startswith(opt) and (opt.endswith(tuple("+IFeSPH")) or "=" in w)):
                out.findings.append(Finding(f"`{name} {opt}` runs a command the rules cannot see"))
                value = w[len(opt) :].lstrip("=")
                if value:
                    out.code.append((f"{name} {opt}", value))
                return


def _ssh(cmd: Command, out: Unwrapped) -> None:
    sk = skip_options(cmd.words, SSH)
    if sk.index + 1 < len(cmd.words) or not cmd.complete:
        out.findings.append(Finding("`ssh HOST COMMAND` runs code the rules cannot see"))
        out.code.append(("ssh", " ".join(cmd.words[sk.index + 1 :])))


def _step(cmd: Command, stdin_code: str | None, out: Unwrapped) -> list[tuple[Command, bool]]:
    """The commands `cmd` runs directly, each with whether an allow rule may match it in
    place of `cmd`; records code and findings in `out`."""
    name = name_of(cmd)
    if not name:
        return []
    out.findings += [Finding(why, True) for why in problems(cmd)]
    if name in WRAPPERS:
        spec = WRAPPERS[name]
        nxt = _wrapper(cmd, name, spec, out)
        return [(nxt, spec.transparent)] if nxt is not None else []
    found: list[Command] = []
    if name in SHELLS:
        _shell(cmd, name, stdin_code, out)
    elif name in INTERPRETERS or PYTHON_RE.match(name):
        _interpreter(cmd, name, out)
    elif name in ("eval", "trap"):
        out.findings.append(Finding(f"`{name}` runs code the rules cannot see"))
        args = [w for w in cmd.words[1:] if w not in ("--", "-p", "-l", "-P")]
        if args:
            out.code.append((name, " ".join(args) if name == "eval" else args[0]))
    elif name in ("source", "."):
        out.findings.append(Finding(f"`{name}` runs a file the rules cannot see"))
    elif name in ("alias", "hash", "enable", "shopt", "unalias"):
        out.findings.append(Finding(f"`{name}` changes what later commands mean", True))
    elif name in ("su", "runuser", "sg"):
        out.findings.append(Finding(f"`{name}` runs a shell the rules cannot see"))
        for flag, value in zip(cmd.words, cmd.words[1:], strict=False):
            if flag in ("-c", "--command"):
                out.code.append((f"{name} -c", value))
    elif name in AWKS or name == "sed":
        _awk_sed(cmd, name, out)
    elif name == "find":
        found = _find(cmd, out)
    elif name == "git":
        return git_step(cmd, out.findings, out.code)
    elif name == "ssh":
        _ssh(cmd, out)
    elif name in CODE_OPTIONS:
        _code_options(cmd, name, out)
    elif name in OPAQUE_RUNNERS:
        out.findings.append(Finding(f"`{name}` runs a command the rules cannot pick out"))
        found = _suffixes(cmd, 1, name)
    return [(c, False) for c in found]


def unwrap(cmd: Command, stdin_code: str | None = None) -> Unwrapped:
    """Everything `cmd` runs through wrappers, the code it hands on, and findings."""
    out = Unwrapped()
    todo = [(cmd, True, 0)]
    while todo:
        current, transparent, depth = todo.pop()
        if depth > MAX_UNWRAP:
            out.findings.append(Finding("wrappers nested too deeply", True))
            break
        found = _step(current, stdin_code if current is cmd else None, out)
        found += [(c, False) for c in out.suffixes]
        out.suffixes = []
        for nxt, through in found:
            ok = transparent and through
            out.inner.append(nxt)
            if ok:
                out.allowable.append(replace(nxt, redirects=cmd.redirects, assigns=cmd.assigns))
            todo.append((nxt, ok, depth + 1))
    return out
