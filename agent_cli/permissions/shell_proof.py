"""Proving a command's words are understood, for every tool the rules keep a table of.

`problems(cmd)` lists why `cmd`'s words are not all understood (empty: they are). A tool with
a table -- git (shell_git), ssh, scp, find, tar, rsync, the bash builtins (shell_builtins)
and the wrappers (shell_unwrap) -- is understood only when every word is literal and every
option is one its table states, read the way the tool reads it (shell_tables); an option
whose value is a command it runs is named as such. A tool without a table is the allow
rule's business: `Bash(ls *)` allows `ls` with any arguments, and bash itself runs nothing
more (shell_syntax and shell_words make sure of that).
"""

from __future__ import annotations

import os

from .shell_builtins import TABLES as BUILTIN_TABLES
from .shell_builtins import builtin_problem
from .shell_model import Command
from .shell_tables import Table, table, walk

SSH = table("4| 6| A| a| C| f| G| g| K| k| M| N| n| q| s| T| t| V| v| X| x| Y| y| B|= b|= "
            "c|= D|= E|= F|=! I|=! i|= J|= L|= l|= m|= O|= o|= p|= Q|= R|= S|= W|= w|=",
            prefix=False)
SCP = table("3| 4| 6| A| B| C| O| p| q| R| r| s| T| v| c|= D|= F|=! i|= J|= l|= o|= P|= "
            "S|=! X|=", prefix=False)
SSH_OPTIONS = frozenset(  # `-o KEY=VALUE` keys that never run a local program
    "batchmode connecttimeout connectionattempts stricthostkeychecking userknownhostsfile "
    "port user identityfile identitiesonly serveraliveinterval serveralivecountmax "
    "compression loglevel forwardagent forwardx11 addressfamily preferredauthentications "
    "passwordauthentication pubkeyauthentication controlmaster controlpath controlpersist "
    "requesttty sendenv setenv tcpkeepalive checkhostip hashknownhosts globalknownhostsfile "
    "numberofpasswordprompts kbdinteractiveauthentication exitonforwardfailure localforward "
    "remoteforward dynamicforward ciphers macs kexalgorithms hostkeyalgorithms "
    "updatehostkeys visualhostkey escapechar clearallforwardings gssapiauthentication "
    "hostkeyalias".split()
)
TAR = table(
    "A|catenate c|create d|diff r|append t|list u|update x|extract f|file= C|directory= "
    "b|blocking-factor= g|listed-incremental= K|starting-file= L|tape-length= M|multi-volume "
    "N|newer= T|files-from= X|exclude-from= V|label= H|format= I|use-compress-program=! "
    "F|info-script=! j|bzip2 J|xz z|gzip Z|compress a|auto-compress v|verbose k|keep-old-files "
    "m|touch O|to-stdout p|preserve-permissions P|absolute-names s|preserve-order S|sparse "
    "U|unlink-first W|verify h|dereference l|check-links o| w|interactive B|read-full-records "
    "G|incremental i|ignore-zeros R|block-number "
    "exclude= exclude-vcs exclude-vcs-ignores exclude-caches strip-components= "
    "to-command=! checkpoint? checkpoint-action=! new-volume-script=! rmt-command=! "
    "rsh-command=! owner= group= mode= mtime= numeric-owner no-same-owner same-owner "
    "no-same-permissions overwrite keep-newer-files skip-old-files transform= xform= "
    "wildcards no-wildcards anchored no-anchored null no-recursion recursion totals? "
    "show-transformed-names zstd lzip lzma lzop delete warning= one-file-system "
    "sort= atime-preserve? ignore-failed-read remove-files gunzip ungzip zstd",
    prefix=False,
)
RSYNC = table(
    "a|archive v|verbose z|compress r|recursive l|links p|perms t|times g|group o|owner D| "
    "h|human-readable P| n|dry-run q|quiet c|checksum u|update H|hard-links A|acls "
    "X|xattrs S|sparse x|one-file-system i|itemize-changes e|rsh=! R|relative m|prune-empty-dirs "
    "L|copy-links k|copy-dirlinks K|keep-dirlinks W|whole-file b|backup f|filter= "
    "delete delete-after delete-before delete-during delete-excluded exclude= include= "
    "exclude-from= include-from= progress partial stats inplace append append-verify "
    "bwlimit= timeout= info= size-only ignore-existing existing remove-source-files "
    "rsync-path=! backup-dir= suffix= chmod= chown= numeric-ids no-motd mkpath "
    "max-size= min-size= list-only out-format= log-file= safe-links",
    prefix=False,
)
FIND_NO_ARG = frozenset(
    "-depth -d -mount -xdev -noleaf -follow -ignore_readdir_race -noignore_readdir_race "
    "-daystart -warn -nowarn -help -version -empty -readable -writable -executable -true "
    "-false -nouser -nogroup -print -print0 -ls -prune -quit ! -not -a -and -o -or , ( ) "
    "-delete".split()
)
FIND_ONE_ARG = frozenset(
    "-maxdepth -mindepth -regextype -files0-from -name -iname -path -ipath -wholename "
    "-iwholename -regex -iregex -type -xtype -size -mtime -mmin -atime -amin -ctime -cmin "
    "-newer -anewer -cnewer -perm -user -group -uid -gid -links -inum -samefile -lname "
    "-ilname -used -fstype -context -printf".split()
)
FIND_RUNS = frozenset("-exec -execdir -ok -okdir".split())
FIND_WRITES = frozenset("-fprint -fprint0 -fprintf -fls".split())
READ_NAMES = frozenset({"find", "test", "[", "getopts"})  # read every word, tables or not
TOOL_TABLES: dict[str, Table] = {"ssh": SSH, "scp": SCP, "tar": TAR, "rsync": RSYNC}


def _ssh_options(name: str, opts: list[tuple[str, str]]) -> str:
    for opt, value in opts:
        if opt == "-F":
            return f"`{name} -F {value}` reads a config file that can run commands"
        if opt == "-I" or opt == "-S" and name == "scp":
            return f"`{name} {opt} {value}` runs or loads a program"
        if opt == "-o":
            key = value.replace("=", " ").split(" ", 1)[0].strip().lower()
            if key not in SSH_OPTIONS:
                return f"`{name} -o {value}` is not an ssh option the rules know to be harmless"
    return ""


def _ssh(name: str, args: list[str]) -> str:
    tbl = TOOL_TABLES[name]
    first = walk(args, tbl, permute=False)
    if first.problem:
        return f"`{name}`: {first.problem}"
    opts = list(first.options)
    if name == "ssh" and first.operands:  # ssh reads options again after the host
        again = walk(first.operands[1:], tbl, permute=False)
        if again.problem:
            return f"`ssh`: {again.problem}"
        opts += again.options
    return _ssh_options(name, opts)


def _tar(args: list[str]) -> str:
    if args and not args[0].startswith("-"):  # `tar xzf a.tar`: old-style clustered letters
        args = ["-" + args[0], *args[1:]]
    w = walk(args, TAR)
    if w.problem:
        return f"`tar`: {w.problem}"
    for opt, _value in w.runs(TAR):
        return f"`tar {opt}` runs a command the rules cannot see"
    return ""


def _find(args: list[str]) -> str:
    i = 0
    while i < len(args) and args[i] in ("-H", "-L", "-P"):
        i += 1
    while i < len(args) and not args[i].startswith("-") and args[i] not in ("(", "!", ")"):
        i += 1  # the starting points
    while i < len(args):
        w = args[i]
        if w in FIND_RUNS:
            while i < len(args) and args[i] not in (";", "+"):
                i += 1
        elif w in FIND_WRITES:
            return f"`find {w}` writes a file the rules do not name"
        elif w == "-delete":
            return "`find -delete` removes files"
        elif w in FIND_ONE_ARG or w.startswith("-newer") and len(w) == 8:
            i += 1
        elif w not in FIND_NO_ARG:
            return f"`find {w}` is not a find primary the rules know"
        i += 1
    return ""


def problems(cmd: Command) -> list[str]:
    """Why `cmd` is not understood word for word (see the module docstring)."""
    if not cmd.words:
        return []
    name = os.path.basename(cmd.words[0])
    tabled = name in TOOL_TABLES or name in BUILTIN_TABLES or name in READ_NAMES
    if name == "git" or tabled:
        if not cmd.complete:
            return [f"`{cmd.shown}` has words decided at run time where `{name}` reads options"]
    args = list(cmd.words[1:])
    if name in ("ssh", "scp"):
        why = _ssh(name, args)
    elif name == "tar":
        why = _tar(args)
    elif name == "rsync":
        w = walk(args, RSYNC)
        why = f"`rsync`: {w.problem}" if w.problem else ""
        why = why or next((f"`rsync {o}` runs a command the rules cannot see"
                           for o, _ in w.runs(RSYNC)), "")
    elif name == "find":
        why = _find(args)
    else:
        why = builtin_problem((name, *args))
    return [why] if why else []
