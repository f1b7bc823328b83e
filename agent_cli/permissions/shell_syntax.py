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

from tree_sitter import Node

from .shell_builtins import NUMBER as NUMBER_RE
from .shell_builtins import PLAIN_NAME
from .shell_model import (
    CONTROL_RE,
    NAME_RE,
    REDIRECTS,
    RESERVED,
    RUNS_LATER_RE,
    SENSITIVE_PREFIXES,
    SENSITIVE_VARS,
    STATEMENTS,
    TOKENS,
    Command,
    Finding,
    Line,
    Word,
    descendants,
    gaps_ok,
    parse_tree,
    shape,
)
from .shell_redirects import RedirectReader, add_shown
from .shell_words import GLOB_CHARS, WordReader

MAX_DEPTH = 6  # code inside code inside code... deeper than this is unreadable
MAX_TREE_DEPTH = 400  # syntax nodes inside one another: the reader recurses, stay far below
TEST_ARITHMETIC = frozenset("-eq -ne -lt -le -gt -ge".split())
DYNAMIC_NODES = frozenset(
    "simple_expansion expansion command_substitution process_substitution "
    "arithmetic_expansion brace_expression".split()
)

class _Reader:
    def __init__(self, line: Line, depth: int) -> None:
        self.line = line
        self.depth = depth
        self.redirects: list[str] = []  # from enclosing redirected statements
        self.words = WordReader(line, self.substitution)
        self.redirs = RedirectReader(line, self.words, self.statement, self._scratch)

    def b(self, node: Node) -> bytes:
        return self.line.raw[node.start_byte : node.end_byte]

    def t(self, node: Node) -> str:
        return self.b(node).decode("utf-8", errors="replace")

    def _scratch(self) -> _Reader:
        """A reader over the same text whose findings and commands are thrown away."""
        return _Reader(Line(self.line.text, raw=self.line.raw), self.depth)

    # ----- statements -------------------------------------------------------------------------
    def statement(self, node: Node) -> None:
        t = node.type
        if node.is_error or node.is_missing:
            self.line.unreadable(f"syntax error near `{shape(self.t(node))}`")
        elif not node.is_named:
            if t not in TOKENS:
                self.line.unreadable(f"`{shape(t)}` where bash does not expect it")
        elif t == "comment":
            before = self.line.raw[: node.start_byte]
            while before.endswith(b"\\\n"):
                before = before[:-2]
            if before and before[-1:] not in b" \t\n;&|()":  # `''\<newline>#`: a word to bash
                self.line.unreadable("a `#` bash reads as part of a word")
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
                (self.statement if child.type == "case_item" else self.words.word)(child)
        elif t == "case_item":
            for child in node.named_children:
                if child.type in STATEMENTS or child.type in ("command", "comment"):
                    self.statement(child)
                elif child.prev_sibling is not None and child.prev_sibling.type == ")":
                    self.statement(child)
                else:
                    self.words.word(child)
        elif t in STATEMENTS:
            if not gaps_ok(node, self.line.raw, True):
                self.line.unreadable("characters the grammar dropped")
            for child in node.children:
                self.statement(child)
        elif t in REDIRECTS:  # a redirection alone still opens (or truncates) its file
            shown = self.redirs.redirect(node)
            self.line.commands.append(
                Command((), True, shape(self.t(node)),
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
        scratch = self._scratch()
        words: list[Word] = []
        for child in node.named_children:
            if child.type == "command_name":
                words += [scratch.words.word(c) for c in child.named_children]
            elif child.type == "variable_assignment":
                return None
            else:
                words.append(scratch.words.word(child))
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
            add_shown(self.redirects, self.redirs.redirect(child))
            stdin_code = self.redirs.literal_input(child) or stdin_code
        if body is not None:
            start = len(self.line.commands)
            self.statement(body)
            if stdin_code is not None and len(self.line.commands) > start:
                self.line.stdin_code[start] = stdin_code
        else:  # redirections alone still open (or truncate) their files
            shown = shape(self.t(node))
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
                self.words.word(child)

    def expressions(self, node: Node) -> None:
        """`[[ ... ]]` and `(( ... ))`: substitutions are read; arithmetic (all of `(( ))`,
        the operands of `-eq` & co., subscripts) only on literal numbers; `-v NAME` only on
        a plain name."""
        whole = node.type == "compound_statement"
        if node.child_count and node.children[0].type == "[" and self._splits(node):
            self.line.findings.append(Finding(
                f"`{shape(self.t(node))}` has words decided at run time: `[` splits them into "
                "operators of its own (`-v a[...]` evaluates a subscript)", True))
        for child in node.named_children:
            if whole:
                self.words.arithmetic(child)
            self._scan_expression(child)

    def _splits(self, node: Node) -> bool:
        """Does a `[ ... ]` hold a word decided at run time (an expansion or a glob)?"""
        for sub in descendants(node):
            if sub.type in DYNAMIC_NODES:
                return True
            if sub.type == "word" and (GLOB_CHARS.search(self.t(sub)) or self.t(sub)[:1] == "~"):
                return True
        return False

    def _literal(self, node: Node) -> str | None:
        return self._scratch().words.word(node).text

    def _scan_expression(self, node: Node) -> None:
        t = node.type
        if t in ("command_substitution", "process_substitution"):
            self.substitution(node)
            return
        if t in ("arithmetic_expansion", "subscript"):
            self.words.arithmetic(node)
        elif t in ("simple_expansion", "expansion"):
            self.words.word(node)
            return
        op = node.child_by_field_name("operator")
        operands = [c for c in node.named_children if c != op]
        if t == "binary_expression" and op is not None and self.t(op) in TEST_ARITHMETIC:
            if any(not NUMBER_RE.match(self._literal(c) or "x") for c in operands):
                self.line.findings.append(Finding(
                    f"`{shape(self.t(node))}` evaluates its operands as arithmetic", True))
        if t == "unary_expression" and op is not None and self.t(op) in ("-v", "-R"):
            if any(not PLAIN_NAME.match(self._literal(c) or "!") for c in operands):
                self.line.findings.append(Finding(
                    f"`{shape(self.t(node))}` evaluates a subscript as arithmetic", True))
        for child in node.named_children:
            self._scan_expression(child)

    # ----- simple commands ---------------------------------------------------------------------
    def command(self, node: Node) -> None:
        if not gaps_ok(node, self.line.raw, False):
            self.line.unreadable("characters the grammar dropped")
        words: list[Word] = []
        assigns: list[str] = []
        redirects = list(self.redirects)
        prev_end = -1
        for child in node.children:
            t = child.type
            joined = prev_end >= 0 and not self.line.raw[prev_end : child.start_byte].replace(
                b"\\\n", b""
            )  # nothing, or only line continuations, between two words: bash joins them
            if joined and t not in REDIRECTS:
                self.line.unreadable("words the grammar split apart")
            prev_end = child.end_byte if t not in REDIRECTS else -1
            if not child.is_named:
                if t == "$" and self.words.lone_dollar(child):  # a literal word
                    words.append(Word("$"))
                elif t != "$":
                    self.line.unreadable(f"`{shape(self.t(child))}`")
            elif t == "variable_assignment":
                assigns.append(self.assignment(child))
            elif t in REDIRECTS:
                add_shown(redirects, self.redirs.redirect(child))
                code = self.redirs.literal_input(child)
                if code is not None:
                    self.line.stdin_code[len(self.line.commands)] = code
            elif t == "command_name":
                words.extend(self.words.word(c) for c in child.named_children)
            else:
                words.append(self.words.word(child))
        self.emit(words, node, redirects, assigns)

    def emit(
        self, words: list[Word], node: Node, redirects: list[str], assigns: list[str]
    ) -> None:
        literal: list[str] = []
        for w in words:
            if w.text is None:
                break
            literal.append(w.text)
        shown = shape(" ".join(self.t(node).split()))
        if words and words[0].text is None:
            self.line.findings.append(
                Finding(f"`{shown}` decides its command word at run time", True)
            )
        elif literal and literal[0] in RESERVED:  # `coproc c { ...; }`: misread by the grammar
            self.line.unreadable(f"`{literal[0]}` where a command should be")
        for text in [*literal, *redirects]:
            if RUNS_LATER_RE.search(text):
                self.line.findings.append(
                    Finding(f"`{shape(text)}` touches a file that decides what later runs")
                )
        self.line.commands.append(
            Command(
                tuple(literal), len(literal) == len(words), shown, tuple(redirects), tuple(assigns)
            )
        )

    def declaration(self, node: Node) -> None:
        words: list[Word] = []
        for child in node.children:
            if not child.is_named:
                words.append(Word(child.type))  # declare / export / local / unset ...
            elif child.type == "variable_assignment":
                name = self.assignment(child)
                value = self.t(child)
                words.append(Word(value) if "$" not in value else Word(None))
                del name
            elif child.type == "variable_name":
                self._check_name(self.t(child), words[0].text or "")
                words.append(Word(self.t(child)))
            else:
                words.append(self.words.word(child))
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
            self.line.unreadable(f"`{shape(name)}=` is not a variable bash would assign")
        if name_node is not None and name_node.type == "subscript":
            self.words.arithmetic(name_node)
            name = name.split("[", 1)[0]
        self._check_name(name, "")
        value = node.child_by_field_name("value")
        if value is not None:
            if value.type == "array":
                for item in value.named_children:
                    self.words.word(item)
            else:
                self.words.word(value)
        return name

    def _check_name(self, name: str, how: str) -> None:
        if name in SENSITIVE_VARS or name.startswith(SENSITIVE_PREFIXES):
            self.line.findings.append(
                Finding(f"setting {name} changes what later commands run", True)
            )

    # ----- words -------------------------------------------------------------------------------
    def substitution(self, node: Node) -> None:
        if self.depth >= MAX_DEPTH:
            self.line.unreadable("nested too deeply")
            return
        inner = _Reader(self.line, self.depth + 1)
        for child in node.named_children:  # not the `$(` / `)` / backquote around them
            inner.statement(child)


def _tree_depth_over(root: Node, limit: int) -> bool:
    """True when the syntax tree is deeper than `limit` (an iterative walk, linear time)."""
    cursor, level = root.walk(), 0
    while True:
        if level > limit:
            return True
        if cursor.goto_first_child():
            level += 1
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return False
            level -= 1


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
    if _tree_depth_over(root, MAX_TREE_DEPTH):  # the reader recurses: refuse before it starts
        line.unreadable(f"nested too deeply (over {MAX_TREE_DEPTH} levels)")
        return line
    reader = _Reader(line, depth)
    reader.statement(root)
    top = [c for c in root.named_children if c.type != "comment"]
    line.single = len(top) == 1 and top[0].type == "command"
    if root.has_error and not any("syntax error" in f.reason for f in line.findings):
        line.unreadable("syntax error")
    return line
