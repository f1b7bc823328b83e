"""Reading a bash command line with tree-sitter-bash: every command it runs, word by word.

`read_line(text)` walks the syntax tree and returns each simple command (in lists, pipelines,
subshells, `$(...)`, backticks, `<(...)`, loops, `if`/`case`, function bodies) with its words
decoded the way bash would (quotes, escapes), up to the first word decided at run time
(`$x`, `${...}`, `$(...)`, `$'...'`, globs, braces, `~`). Only node types listed here are
understood; anything else, a parse error or a control character makes the line unreadable,
and an unreadable line is never auto-allowed. What the commands run in turn (wrappers, code
given to a shell) is shell_unwrap's job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from tree_sitter import Language, Node, Parser

MAX_DEPTH = 6  # code inside code inside code... deeper than this is unreadable
SENSITIVE_VARS = frozenset(
    "PATH IFS ENV BASH_ENV SHELLOPTS BASHOPTS GLOBIGNORE PS4 PROMPT_COMMAND CDPATH HOME "
    "PAGER EDITOR VISUAL SHELL PYTHONPATH PYTHONSTARTUP NODE_OPTIONS PERL5OPT PERL5LIB "
    "RUBYOPT RUBYLIB".split()
)
SENSITIVE_PREFIXES = ("LD_", "DYLD_", "GIT_", "BASH_FUNC_")
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
GLOB_CHARS = re.compile(r"[*?\[]")
BRACE_RE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[.*\])?$", re.DOTALL)
CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
STATEMENTS = frozenset(
    "program list pipeline subshell compound_statement negated_command if_statement "
    "elif_clause else_clause while_statement for_statement do_group case_statement "
    "case_item redirected_statement".split()
)
REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
TOKENS = frozenset(  # punctuation and keywords a statement may contain
    "; & \n | |& && || ( ) { } ! if then else elif fi while until do done for select in "
    "case esac function (( ))".split(" ")
) | {"\n"}
ARITHMETIC = frozenset(
    "arithmetic_expansion binary_expression unary_expression postfix_expression "
    "ternary_expression parenthesized_expression".split()
)


@cache
def _language() -> Language:
    import tree_sitter_bash

    return Language(tree_sitter_bash.language())


def parse_tree(raw: bytes) -> Node:
    """The tree-sitter-bash syntax tree of UTF-8 `raw` (its root node). Every byte past ASCII
    is parsed as `a`: bash treats them all as word characters, and the grammar's scanner
    crashes on some code points (U+F0000, ...). Byte offsets stay those of `raw`."""
    safe = raw.translate(_ASCII_ONLY)
    return Parser(_language()).parse(safe).root_node


_ASCII_ONLY = bytes(b if b < 0x80 else ord("a") for b in range(256))


@dataclass(frozen=True)
class Command:
    """One simple command. `words` are literal up to the first word decided at run time."""

    words: tuple[str, ...]
    complete: bool  # True: `words` is the whole argv
    shown: str  # how to name it in a message
    redirects: tuple[str, ...] = ()  # redirections that read or write files ("> out.txt")
    assigns: tuple[str, ...] = ()  # NAME=... before the command word
    via: str = ""  # how it was reached: "timeout", "bash -c", "find -exec" (empty: as written)


@dataclass(frozen=True)
class Finding:
    """Why the rules cannot see everything a line runs. `strict`: no allow rule with a
    specifier covers the line at all (it changes what later commands mean); otherwise it
    only stops auto-allowing while a deny rule exists."""

    reason: str
    strict: bool = False


@dataclass
class Line:
    """What `read_line` found: the commands in source order and the findings."""

    text: str
    commands: list[Command] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    stdin_code: dict[int, str] = field(default_factory=dict)  # index -> literal code on stdin
    single: bool = False  # the whole line is one simple command node
    raw: bytes = b""  # the line as UTF-8: node byte ranges index into it

    def unreadable(self, why: str) -> None:
        self.findings.append(Finding(f"the shell grammar cannot read this command ({why})", True))


@dataclass(frozen=True)
class _Word:
    text: str | None  # None: decided at run time


def _shape(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."


def _unescape_unquoted(raw: str, line: Line) -> str:
    out: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\":
            if i + 1 >= len(raw):
                line.unreadable("a trailing backslash")
                return "".join(out)
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        if c in "\n \t":
            line.unreadable("blank space inside a word")
        out.append(c)
        i += 1
    return "".join(out)


def _gaps_ok(node: Node, newlines: bool) -> bool:
    """Is everything between `node`'s children blank (so no character was dropped)?"""
    src = node.text or b""
    pos = node.start_byte
    allowed = b" \t\n" if newlines else b" \t"
    for child in [*node.children, None]:
        end = child.start_byte if child is not None else node.end_byte
        gap = src[pos - node.start_byte : end - node.start_byte].replace(b"\\\n", b"")
        if gap.strip(allowed):
            return False
        if child is not None:
            pos = child.end_byte
    return True


def _unescape_double(raw: str, line: Line) -> str:
    if "`" in raw or "$(" in raw:
        line.unreadable("a substitution the grammar did not see")
    out: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw) and raw[i + 1] in '$`"\\\n':
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


class _Reader:
    def __init__(self, line: Line, depth: int) -> None:
        self.line = line
        self.depth = depth
        self.redirects: list[str] = []  # from enclosing redirected statements

    def b(self, node: Node) -> bytes:
        return self.line.raw[node.start_byte : node.end_byte]

    def t(self, node: Node) -> str:
        return self.b(node).decode("utf-8", errors="replace")

    # ----- statements -------------------------------------------------------------------------
    def statement(self, node: Node) -> None:
        t = node.type
        if node.is_error or node.is_missing:
            self.line.unreadable(f"syntax error near `{_shape(self.t(node))}`")
        elif not node.is_named:
            if t not in TOKENS:
                self.line.unreadable(f"`{_shape(t)}` where bash does not expect it")
        elif t == "comment":
            return
        elif t == "command":
            self.command(node)
        elif t == "pipeline":
            self.pipeline(node)
        elif t == "redirected_statement":
            self.redirected(node)
        elif t in ("declaration_command", "unset_command"):
            self.declaration(node)
        elif t in ("variable_assignment", "variable_assignments"):
            self.assignments(node)
        elif t == "function_definition":
            for child in node.named_children:
                if child.type != "word":
                    self.statement(child)
        elif t == "for_statement":
            self.for_loop(node)
        elif t in ("test_command",):
            self.expressions(node)
        elif t == "compound_statement" and node.child_count and node.children[0].type == "((":
            self.expressions(node)
        elif t == "case_statement":
            for child in node.named_children:
                (self.statement if child.type == "case_item" else self.word)(child)
        elif t == "case_item":
            for child in node.named_children:
                if child.type in STATEMENTS or child.type in ("command", "comment"):
                    self.statement(child)
                elif child.prev_sibling is not None and child.prev_sibling.type == ")":
                    self.statement(child)
                else:
                    self.word(child)
        elif t in STATEMENTS:
            if not _gaps_ok(node, True):
                self.line.unreadable("characters the grammar dropped")
            for child in node.children:
                self.statement(child)
        elif t in REDIRECTS:  # a redirection alone still opens (or truncates) its file
            shown = self.redirect(node)
            self.line.commands.append(
                Command((), True, _shape(self.t(node)),
                        tuple([*self.redirects, shown] if shown else self.redirects))
            )
        else:
            self.line.unreadable(f"`{t}`")

    def pipeline(self, node: Node) -> None:
        previous: Node | None = None
        for child in node.children:
            if not child.is_named:
                continue
            start = len(self.line.commands)
            self.statement(child)
            if previous is not None and previous.type == "command":
                code = self._echo_output(previous)
                if code is not None and len(self.line.commands) > start:
                    self.line.stdin_code[start] = code
            previous = child

    def _echo_output(self, node: Node) -> str | None:
        """The literal text `echo a b` / `printf '%s' x` writes, when it is plain."""
        scratch = _Reader(Line(self.line.text, raw=self.line.raw), self.depth)
        words: list[_Word] = []
        for child in node.named_children:
            if child.type == "command_name":
                words += [scratch.word(c) for c in child.named_children]
            elif child.type == "variable_assignment":
                return None
            else:
                words.append(scratch.word(child))
        texts = [w.text for w in words]
        if not texts or None in texts or scratch.line.findings:
            return None
        if texts[0] == "echo":
            return " ".join(t for t in texts[1:] if t not in ("-n", "-e", "-E"))  # type: ignore[misc]
        if texts[0] == "printf" and len(texts) >= 2:
            return " ".join(texts[1:])  # type: ignore[arg-type]
        return None

    def redirected(self, node: Node) -> None:
        body = node.child_by_field_name("body")
        outer = list(self.redirects)
        stdin_code = None
        for child in node.named_children:
            if child == body:
                continue
            self._add(self.redirects, self.redirect(child))
            stdin_code = self._literal_input(child) or stdin_code
        if body is not None:
            start = len(self.line.commands)
            self.statement(body)
            if stdin_code is not None and len(self.line.commands) > start:
                self.line.stdin_code[start] = stdin_code
        else:  # redirections alone still open (or truncate) their files
            shown = _shape(self.t(node))
            self.line.commands.append(Command((), True, shown, tuple(self.redirects)))
        self.redirects = outer

    def for_loop(self, node: Node) -> None:
        var = node.child_by_field_name("variable")
        if var is not None:
            self._check_name(self.t(var), "for")
        for child in node.named_children:
            if child == var:
                continue
            if child.type == "do_group":
                self.statement(child)
            else:
                self.word(child)

    def expressions(self, node: Node) -> None:
        """`[[ ... ]]` and `(( ... ))`: look for substitutions and arithmetic on variables."""
        for child in node.named_children:
            self._scan_expression(child)

    def _scan_expression(self, node: Node) -> None:
        t = node.type
        if t in ("command_substitution", "process_substitution"):
            self.substitution(node)
            return
        if t in ARITHMETIC or t == "subscript":
            self._arithmetic(node)
        if t == "binary_expression":
            op = node.child_by_field_name("operator")
            if op is not None and op.type in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge"):
                self._arithmetic(node)
        for child in node.named_children:
            self._scan_expression(child)

    def _arithmetic(self, node: Node) -> None:
        for sub in _descendants(node):
            if sub.type in ("variable_name", "simple_expansion", "expansion", "word"):
                self.line.findings.append(
                    Finding(
                        "arithmetic on a variable can run code the rules cannot see "
                        f"(`{_shape(self.t(node))}`)",
                        True,
                    )
                )
                return

    # ----- simple commands ---------------------------------------------------------------------
    def command(self, node: Node) -> None:
        if not _gaps_ok(node, False):
            self.line.unreadable("characters the grammar dropped")
        words: list[_Word] = []
        assigns: list[str] = []
        redirects = list(self.redirects)
        prev_end = -1
        for child in node.children:
            t = child.type
            if child.start_byte == prev_end and t not in REDIRECTS:
                self.line.unreadable("words the grammar split apart")
            prev_end = child.end_byte if t not in REDIRECTS else -1
            if not child.is_named:
                if t == "$":  # a lone `$` is a literal word
                    words.append(_Word("$"))
                else:
                    self.line.unreadable(f"`{_shape(self.t(child))}`")
            elif t == "variable_assignment":
                assigns.append(self.assignment(child))
            elif t in REDIRECTS:
                self._add(redirects, self.redirect(child))
                code = self._literal_input(child)
                if code is not None:
                    self.line.stdin_code[len(self.line.commands)] = code
            elif t == "command_name":
                words.extend(self.word(c) for c in child.named_children)
            else:
                words.append(self.word(child))
        self.emit(words, node, redirects, assigns)

    def emit(
        self, words: list[_Word], node: Node, redirects: list[str], assigns: list[str]
    ) -> None:
        literal: list[str] = []
        for w in words:
            if w.text is None:
                break
            literal.append(w.text)
        shown = _shape(" ".join(self.t(node).split()))
        if words and words[0].text is None:
            self.line.findings.append(
                Finding(f"`{shown}` decides its command word at run time", True)
            )
        self.line.commands.append(
            Command(
                tuple(literal), len(literal) == len(words), shown, tuple(redirects), tuple(assigns)
            )
        )

    def declaration(self, node: Node) -> None:
        words: list[_Word] = []
        for child in node.children:
            if not child.is_named:
                words.append(_Word(child.type))  # declare / export / local / unset ...
            elif child.type == "variable_assignment":
                name = self.assignment(child)
                value = self.t(child)
                words.append(_Word(value) if "$" not in value else _Word(None))
                del name
            elif child.type == "variable_name":
                self._check_name(self.t(child), words[0].text or "")
                words.append(_Word(self.t(child)))
            else:
                words.append(self.word(child))
        for w in words:
            if w.text is not None and "[" in w.text:
                self.line.findings.append(
                    Finding("an array subscript is evaluated by bash and can run code", True)
                )
        self.emit(words, node, list(self.redirects), [])

    def assignments(self, node: Node) -> None:
        targets = node.named_children if node.type == "variable_assignments" else [node]
        for child in targets:
            self.assignment(child)

    def assignment(self, node: Node) -> str:
        name_node = node.child_by_field_name("name")
        name = self.t(name_node) if name_node is not None else ""
        if not NAME_RE.match(name):
            self.line.unreadable(f"`{_shape(name)}=` is not a variable bash would assign")
        if name_node is not None and name_node.type == "subscript":
            self._arithmetic(name_node)
            name = name.split("[", 1)[0]
        self._check_name(name, "")
        value = node.child_by_field_name("value")
        if value is not None:
            if value.type == "array":
                for item in value.named_children:
                    self.word(item)
            else:
                self.word(value)
        return name

    def _check_name(self, name: str, how: str) -> None:
        if name in SENSITIVE_VARS or name.startswith(SENSITIVE_PREFIXES):
            self.line.findings.append(
                Finding(f"setting {name} changes what later commands run", True)
            )

    # ----- redirections ------------------------------------------------------------------------
    @staticmethod
    def _add(redirects: list[str], shown: str) -> None:
        if shown:
            redirects.append(shown)

    def redirect(self, node: Node) -> str:
        """'' for a harmless redirection (fd duplication, /dev/null, a here-document into a
        command), else how it reads: "> out.txt"."""
        t = node.type
        if t == "heredoc_redirect":
            for child in node.named_children:
                if child.type == "heredoc_body":
                    self._heredoc_body(node, child)
                elif child.type not in ("heredoc_start", "heredoc_end"):
                    # `cat <<EOF | sh`: the rest of the pipeline reads what cat passes on
                    start = len(self.line.commands)
                    self.statement(child)
                    body = self._literal_input(node)
                    if body is not None and len(self.line.commands) > start:
                        self.line.stdin_code[start] = body
            return ""
        if t == "herestring_redirect":
            for child in node.named_children:
                self.word(child)
            return ""
        op = ""
        target: _Word | None = None
        for child in node.children:
            if child.type == "file_descriptor":
                continue
            if not child.is_named:
                op += child.type
            else:
                target = self.word(child)
        if target is None:
            return ""
        if op in (">&", "<&", ">&-", "<&-") and target.text is not None and (
            target.text.isdigit() or target.text == "-"
        ):
            return ""
        if target.text in HARMLESS_TARGETS and op in (">", ">>", "&>", "&>>", ">|", ">&"):
            return ""
        shown = self.t(node)
        return _shape(shown)

    def _heredoc_body(self, redirect: Node, body: Node) -> None:
        quoted = any(
            c.type == "heredoc_start" and self.b(c)[:1] in (b"'", b'"', b"\\")
            for c in redirect.named_children
        ) or any(c.type == "heredoc_start" and b"\\" in self.b(c) for c in redirect.named_children)
        if quoted:
            return
        text = self.b(body)
        seen = [d for d in _descendants(body) if self.b(d)[:2] in (b"$(", b"`")]
        if text.count(b"`") > 2 * sum(self.b(d)[:1] == b"`" for d in seen) or text.count(
            b"$("
        ) > sum(self.b(d)[:2] == b"$(" for d in seen):
            self.line.unreadable("a substitution in a here-document")
        for child in body.named_children:
            if child.type != "heredoc_content":
                self.word(child)

    def _literal_input(self, node: Node) -> str | None:
        """The literal text a here-string or here-document feeds to the command."""
        if node.type == "herestring_redirect":
            scratch = _Reader(Line(self.line.text, raw=self.line.raw), self.depth)
            words = [scratch.word(c) for c in node.named_children]
            if words and all(w.text is not None for w in words):
                return " ".join(w.text for w in words if w.text is not None)
            return None
        if node.type == "heredoc_redirect":
            for child in node.named_children:
                if child.type == "heredoc_body" and not child.named_children:
                    return self.t(child)
                if child.type == "heredoc_body":
                    parts = child.named_children
                    if all(p.type == "heredoc_content" for p in parts):
                        return self.t(child)
        return None

    # ----- words -------------------------------------------------------------------------------
    def word(self, node: Node) -> _Word:
        t = node.type
        text = self.t(node)
        if node.is_error or node.is_missing or node.has_error:
            self.line.unreadable(f"syntax error near `{_shape(text)}`")
            return _Word(None)
        if t in ("word", "number"):
            if "$" in text or "`" in text or "(" in text or ")" in text:
                self.line.unreadable(f"`{_shape(text)}`")
                return _Word(None)
            if GLOB_CHARS.search(text) or BRACE_RE.search(text) or text.startswith("~"):
                return _Word(None)
            return _Word(_unescape_unquoted(text, self.line))
        if t == "raw_string":
            return _Word(text[1:-1])
        if t == "string":
            return self.double_quoted(node)
        if t == "concatenation":
            return self.concatenation(node)
        if t in ("command_substitution", "process_substitution"):
            self.substitution(node)
            return _Word(None)
        if t == "expansion":
            self.expansion(node)
            return _Word(None)
        if t in ("simple_expansion", "ansi_c_string", "translated_string", "brace_expression"):
            for child in node.named_children:
                if child.type == "string":
                    self.double_quoted(child)
            return _Word(None)
        if t == "arithmetic_expansion":
            self._arithmetic(node)
            for sub in _descendants(node):
                if sub.type in ("command_substitution", "process_substitution"):
                    self.substitution(sub)
            return _Word(None)
        if t in ("variable_name", "test_operator", "regex", "extglob_pattern"):
            return _Word(text if t != "extglob_pattern" else None)
        self.line.unreadable(f"`{t}`")
        return _Word(None)

    def double_quoted(self, node: Node) -> _Word:
        """A "..." word: literal text between the children is taken from the source bytes,
        so nothing the grammar leaves out (a lone blank) is lost."""
        out: list[str] = []
        dynamic = False
        raw = self.line.raw
        pos = node.start_byte + 1
        inner = node.children[1:-1] if node.child_count >= 2 else []
        for child in inner:
            if child.type in ("string_content", "$") or not child.is_named:
                continue  # read with the gaps below
            out.append(_unescape_double(raw[pos : child.start_byte].decode("utf-8", "replace"),
                                        self.line))
            self.word(child)
            dynamic = True
            pos = child.end_byte
        end = node.end_byte - 1 if node.child_count >= 2 else node.end_byte
        out.append(_unescape_double(raw[pos:end].decode("utf-8", "replace"), self.line))
        return _Word(None if dynamic else "".join(out))

    def concatenation(self, node: Node) -> _Word:
        parts = []
        for c in node.children:
            if c.is_named:
                parts.append(self.word(c))
            elif c.type == "$":
                parts.append(_Word("$"))
            else:
                self.line.unreadable(f"`{_shape(self.t(c))}`")
        shape = "".join(
            self.t(c) if c.type == "word" else "Q"
            for c in node.named_children
        )
        if BRACE_RE.search(shape) or any(p.text is None for p in parts):
            return _Word(None)
        return _Word("".join(p.text or "" for p in parts))

    def expansion(self, node: Node) -> None:
        text = self.t(node)
        if "!" in text[:3] or "[" in text or re.match(r"\$\{#?\w+:[^-=+?]", text):
            self.line.findings.append(
                Finding(f"the expansion `{_shape(text)}` is evaluated by bash", True)
            )
        for child in node.named_children:
            if child.type not in ("variable_name", "special_variable_name"):
                self.word(child)

    def substitution(self, node: Node) -> None:
        if self.depth >= MAX_DEPTH:
            self.line.unreadable("nested too deeply")
            return
        inner = _Reader(self.line, self.depth + 1)
        for child in node.named_children:  # not the `$(` / `)` / backquote around them
            inner.statement(child)


def _descendants(node: Node) -> list[Node]:
    out, stack = [], list(node.named_children)
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(n.named_children)
    return out


def read_line(text: str, depth: int = 0) -> Line:
    """Every simple command `text` runs as written, and what kept the reading from being
    complete. Never raises; a line too deep or unparsable is reported as a strict finding."""
    line = Line(text)
    if CONTROL_RE.search(text):
        line.unreadable("a control character")
    if depth > MAX_DEPTH:
        line.unreadable("nested too deeply")
        return line
    line.raw = text.encode("utf-8", errors="surrogatepass")
    try:
        root = parse_tree(line.raw)
    except (RecursionError, ValueError) as exc:  # pragma: no cover - grammar limits
        line.unreadable(str(exc))
        return line
    reader = _Reader(line, depth)
    reader.statement(root)
    top = [c for c in root.named_children if c.type != "comment"]
    line.single = len(top) == 1 and top[0].type == "command"
    if root.has_error and not any("syntax error" in f.reason for f in line.findings):
        line.unreadable("syntax error")
    return line
