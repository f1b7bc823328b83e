"""The interactive REPL: a prompt_toolkit PromptSession on the main thread, the lead's turns
on a worker thread, teammates' activity printed above the prompt, approvals from any thread.

Prompt history is kept per project in `<workdir>/.agent-cli/history` (Ctrl-R searches it).
When any thread asks for approval, the prompt is closed with a `Paused` result carrying what
was typed; the main loop shows the queued requests one at a time (other output is held
back meanwhile), then reopens the prompt with the same text.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import threading
from dataclasses import dataclass
from typing import Any

from prompt_toolkit import PromptSession
from rich.text import Text

from ..events import MessageEvent
from ..team.lead_hooks import LeadHooks
from . import startup
from .approvals import SUBMIT, ApprovalPrompter, approval_panel, outcome_line
from .completer import SlashCompleter
from .custom_commands import command_turn, completion_help
from .lead import LeadRunner
from .printer import Printer
from .project_trust_view import ask_project_settings
from .prompt_session import PROMPT, PromptKeys, make_session
from .render import EventView, UiSettings, spinner_line, stream_tail
from .slash import ALIASES, COMMANDS, SlashContext, argument_values, command_help, dispatch
from .style import make_console, render_str
from .ticker import Ticker
from .toolbar import StatusCache, toolbar_fragments, total_tokens


@dataclass
class Paused:
    """The prompt was closed for an approval; `text` is what the user had typed."""

    text: str


class Repl:
    def __init__(
        self,
        runtime: Any,
        *,
        input: Any = None,
        output: Any = None,
        out: Any = None,
        color: bool | None = None,
        width: int | None = None,
        close_timeout: float = 10.0,
    ) -> None:
        self.runtime = runtime
        self.color = (sys.stdout.isatty() and "NO_COLOR" not in os.environ) if color is None \
            else color
        self._width = width
        self.close_timeout = close_timeout
        self.patch = out is None  # real terminal: print through a TerminalOut
        self.term: Any = None
        self.printer = Printer(out if out is not None else (lambda: sys.stdout))
        self.settings = UiSettings()
        self.status = StatusCache(runtime)
        self.view = EventView(self.printer, self.settings, self.width, self.color, self.changed)
        # The model's name is checked now (a bad --model fails at once); the model and the
        # lead Agent are built once the prompt is on screen.
        model_name = runtime.model_name("lead")
        self.lead_hooks = LeadHooks(runtime)
        self.lead = LeadRunner(runtime, runtime.team.make_lead, self.changed, model_name,
                               hooks=self.lead_hooks)
        self.prompter = ApprovalPrompter(input, output, self.color)
        self._approval_wanted = threading.Event()
        self.session = self._make_session(input, output)
        self.ticker = Ticker(lambda: self.lead.busy, self._redraw)
        self.status_line: Any = None  # built at the first toolbar drawn once trust is settled
        self._status_checked = False
        self._status_lock = threading.Lock()

    # ----- building -------------------------------------------------------------------
    def width(self) -> int:
        return self._width or max(40, shutil.get_terminal_size((100, 40)).columns)

    def _make_session(self, input: Any, output: Any) -> PromptSession:
        keys = PromptKeys(lambda: self.lead.busy, self._interrupt, self._cycle_mode, self.note,
                          self._show_thinking)
        completer = SlashCompleter(completion_help(self.runtime, command_help()),
                                   argument_values(self.runtime))
        return make_session(self.runtime.workdir / ".agent-cli" / "history", completer, keys,
                            self._toolbar, input, output)

    def _interrupt(self) -> bool:
        """Esc / Ctrl-C: stop the lead's turn; False when it was not running one."""
        if not self.lead.interrupt():
            return False
        self.view.reset_live()
        return True

    def _cycle_mode(self) -> None:
        self.runtime.policy.cycle_mode()
        self.changed()

    # ----- what the prompt shows ------------------------------------------------------
    def _message(self) -> list[tuple[str, str]]:
        if not self.lead.busy or self.lead.started_at is None:
            return [("class:prompt", PROMPT)]
        text, activity = self.view.live()
        frags = [("class:stream", line + "\n") for line in stream_tail(text, self.width() - 1)]
        line = spinner_line(self.lead.started_at, activity)
        retry = self.runtime.retries.describe("lead")
        if retry:
            line += f" · {retry} (esc cancels)"
        if self.lead.queued:
            line += f" · {self.lead.queued} queued"
        frags.append(("class:spinner", line + "\n"))
        frags.append(("class:prompt", PROMPT))
        return frags

    def _toolbar(self) -> list[tuple[str, str]]:
        snap = self.status.get()
        tokens = total_tokens(self.lead.tokens, snap.members)
        frags = toolbar_fragments(snap, self.lead.model_name, self.runtime.policy.mode, tokens,
                                  width=self.width(), context=self.lead.context)
        if not self._status_checked and getattr(self.runtime, "held_settings", None) is None:
            with self._status_lock:  # the UI thread and a redraw from another may both be here
                if not self._status_checked:  # asked (and answered) about the repository's first
                    self.status_line = self._make_status_line()
                    self._status_checked = True
        line = self.status_line.text() if self.status_line is not None else ""
        return [("class:tb.dim", f" {line}\n"), *frags] if line else frags

    def _make_status_line(self) -> Any:
        """Claude Code's statusLine setting (a repository's only once trusted), or None."""
        from .status_line import StatusLine, session_payload, status_command

        settings = getattr(self.runtime, "settings", None)
        command = status_command(settings.value("statusLine")[0]) if settings else ""
        if not command:
            return None
        env = {**os.environ, **getattr(self.runtime, "tool_env", {})}
        return StatusLine(command, self.runtime.workdir,
                          lambda: session_payload(self.runtime, self.lead.model_name),
                          self._redraw, env)

    def changed(self) -> None:
        """Something the toolbar or spinner shows changed (any thread)."""
        self.status.mark_stale()
        self._redraw()
        self.ticker.poke()

    def _redraw(self) -> None:
        app = self.session.app
        if app.is_running:
            try:
                app.invalidate()
            except RuntimeError:  # the prompt ended between the check and the call
                pass

    def _show_thinking(self) -> None:
        """Ctrl-O: the lead's latest extended thinking in full, dimmed."""
        from .render import last_thinking

        text = last_thinking(self.lead.agent.conversation)
        self.note(f"✻ {text}" if text else "(the lead has not thought yet: extended thinking "
                  "is off, or its last turns had none; --thinking turns it on)", "dim italic")

    def note(self, text: str, style: str = "dim") -> None:
        self.printer.write(render_str(Text(text, style=style), self.width(), self.color))

    # ----- the lead answers its teammates ---------------------------------------------
    def _on_plan_request(self, event: Any) -> None:
        """A teammate waits for the lead to review its plan: give the lead a turn on its
        inbox at once (after the running turn, if any), as a team lead reacts to teammates."""
        if not (isinstance(event, MessageEvent) and event.to == "lead"
                and event.msg_type == "plan_approval_request"):
            return
        busy = self.lead.busy
        if not self.lead.wake():
            return  # a review turn is already on its way: it reads every waiting plan
        when = "when its current turn ends" if busy else "now"
        self.note(f"{event.agent}'s plan waits for the lead: the lead reviews it {when} "
                  "(esc interrupts)", style="yellow")

    # ----- approvals ------------------------------------------------------------------
    def _on_request(self) -> None:
        """Broker callback (the asking thread): close the prompt so the main loop can ask."""
        self._approval_wanted.set()
        app = self.session.app
        loop = app.loop
        if app.is_running and loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop just closed: pre_run sees it
                loop.call_soon_threadsafe(self._pause_prompt)

    def _pre_run(self) -> None:
        """The prompt is about to be drawn: build the lead once it is on screen (a build
        started now would hold the interpreter while the first prompt draws); pause if asked."""
        app = self.session.app

        def drawn(_: Any) -> None:
            app.after_render -= drawn
            self.lead.warm()

        app.after_render += drawn
        self._pause_prompt()

    def _pause_prompt(self) -> None:
        """On the prompt's event loop (or as its pre_run): exit with the typed text."""
        app = self.session.app
        if not self._approval_wanted.is_set() or app.future is None or app.future.done():
            return
        app.erase_when_done = True  # the prompt comes back, so leave no copy of it behind
        app.exit(result=Paused(app.current_buffer.text))

    def service_approvals(self) -> int:
        """Show every waiting request, one at a time; return how many were answered."""
        from ..permissions.broker import ApprovalAnswer

        self._approval_wanted.clear()
        broker = self.runtime.broker
        req = broker.next_request(0)
        if req is None:
            return 0
        answered = 0
        self.printer.pause()
        try:
            while req is not None:
                queued = max(0, len(broker.pending()) - 1)
                why = req.purpose or startup.current_work(self.runtime, req.agent)
                panel = approval_panel(req, queued, why)
                self.printer.write(render_str(panel, self.width(), self.color), urgent=True)
                self._drain()  # the question is drawn below everything, and nothing follows
                try:
                    answer = self.prompter.ask(req)
                except (EOFError, KeyboardInterrupt):
                    answer = ApprovalAnswer("deny")
                if broker.answer(req.id, answer):
                    line = outcome_line(req, answer)
                else:
                    line = Text(f"{req.agent} no longer waits for this (cancelled)", style="dim")
                self.printer.write(render_str(line, self.width(), self.color), urgent=True)
                answered += 1
                req = broker.next_request(0)
        finally:
            self.printer.resume()
        return answered

    # ----- the loop -------------------------------------------------------------------
    def run(self) -> int:
        ctx = self._terminal() if self.patch else contextlib.nullcontext()
        with ctx:
            unsubscribe = self.runtime.events.subscribe(self.view.handle)
            unsubscribe_plans = self.runtime.events.subscribe(self._on_plan_request)
            try:
                self.start()
                self.ticker.start()
                self.loop()
            finally:
                self.ticker.close()
                unsubscribe_plans()
                self.finish()
                unsubscribe()
        return 0

    def _terminal(self) -> Any:
        """Our stdout for the session: prints above the prompt, and can be drained."""
        from .terminal import TerminalOut

        self.term = TerminalOut()
        return self.term

    def _drain(self) -> None:
        """Wait until everything printed so far is on the screen (a real terminal only)."""
        if self.term is not None:
            self.term.drain()

    def start(self) -> None:
        # Attach first: from now on any thread's question waits for the human (nothing is
        # running yet, so nothing can ask during the start-up question below).
        self.runtime.broker.attach_ui(self._on_request)
        self.printer.write(render_str(startup.banner(self.runtime, self.lead.model_name),
                                      self.width(), self.color))
        ask_project_settings(self.runtime, self._question)
        self.lead_hooks.session_start()
        stale = startup.stale_tasks(self.runtime)
        if stale and self._question(startup.stale_question(stale),
                                    "Release them so other teammates can claim them? [y/N] "):
            failed = startup.release_all(self.runtime, stale)  # releases: the board's lines
            if failed.plain:
                self.printer.write(render_str(failed, self.width(), self.color))
        self._start_mcp()
        from ..team.resume import resume_pending

        resume_pending(self.runtime)  # -c / --resume: the session's teammates, now they can ask

    def _question(self, text: Any, prompt: str) -> bool:
        """Show `text`, ask `prompt` [y/N] on the terminal; True for yes."""
        self.printer.write(render_str(text, self.width(), self.color))
        self._drain()
        try:
            yes = PromptSession(input=self.session.input, output=self.session.output).prompt(
                prompt)
        except (EOFError, KeyboardInterrupt):
            yes = ""
        return yes.strip().lower() in ("y", "yes")

    def _start_mcp(self) -> None:
        """Ask once about a project's untrusted .mcp.json servers, then start in background."""
        mcp = self.runtime.mcp
        if mcp is None:
            return
        from .mcp_view import start_note, trust_question

        for problem in mcp.problems:
            self.note(problem, style="red")
        pending = mcp.needs_trust()
        if pending:
            problem = mcp.answer_trust(pending, self._question(trust_question(pending),
                                                               "Start them? [y/N] "))
            if problem:
                self.note(f"answer not saved: {problem}", style="yellow")
        note = start_note(mcp.start())
        if note is not None:
            self.printer.write(render_str(note, self.width(), self.color))

    def loop(self) -> None:
        pending = ""
        while True:
            self.service_approvals()
            pending += self.prompter.take_typed()  # typing that a question interrupted
            *finished, pending = pending.split(SUBMIT)
            if not self._submit_typed(finished):
                return
            try:
                result = self.session.prompt(
                    self._message, default=pending, pre_run=self._pre_run
                )
            except EOFError:
                return
            except KeyboardInterrupt:
                pending = ""
                continue
            finally:
                self.session.app.erase_when_done = False
            if isinstance(result, Paused):
                pending = result.text
                continue
            pending = ""
            if not self.handle(result):
                return

    def _submit_typed(self, lines: list[str]) -> bool:
        """Lines finished with Enter while a question was shown: each is submitted as if
        typed at the prompt (shown, kept in the history, handled), in order. False: exit."""
        for line in lines:
            self.printer.write(PROMPT + line.replace("\n", "\n  "))
            if line.strip():
                self.session.history.append_string(line)
            if not self.handle(line):
                return False
        return True

    def handle(self, line: str) -> bool:
        """Act on one submitted input; False means exit."""
        text = line.strip()
        if not text:
            return True
        custom = command_turn(self.runtime, text) if self._custom(text) else None
        if custom is not None:  # a .claude/commands file: one lead turn
            if not self.lead.submit(custom):
                self.note(f"queued: {custom.command.name} runs when the lead finishes")
            return True
        if text.startswith("/"):
            buf = io.StringIO()
            ctx = SlashContext(make_console(buf, self.width(), self.color), self.runtime,
                               self.lead, self.settings)
            result = dispatch(ctx, text)
            self.printer.write(buf.getvalue())
            self.changed()
            return not result.quit
        if text.startswith("!"):
            from .shell import run_user_shell

            shown = run_user_shell(text[1:], self.runtime.workdir)
            self.printer.write(render_str(shown, self.width(), self.color))
            return True
        if not self.lead.submit(line):
            self.note("queued: the lead reads this when it finishes (esc interrupts)")
        return True

    @staticmethod
    def _custom(text: str) -> bool:
        """A /name that is no built-in (a built-in always wins over a command file)."""
        name = text.split(None, 1)[0] if text.startswith("/") else ""
        return bool(name) and name not in COMMANDS and name not in ALIASES

    def finish(self) -> None:
        """Exit: deny what still waits, stop the lead, shut the team down (bounded)."""
        self.runtime.broker.detach_ui()
        if self.lead.interrupt():
            self.lead.wait_idle(5.0)
        running = self.runtime.team.running()
        if running:
            self.note(f"asking {', '.join(running)} to shut down…")
        busy = self.runtime.close(self.close_timeout)
        if busy:
            self.note(f"still busy after {self.close_timeout:.0f}s: {', '.join(busy)} "
                      "(their tasks stay in progress; release them next time)", style="yellow")
        elif running:
            self.note("all teammates stopped.")
        self.lead_hooks.session_end("prompt_input_exit")


def run_repl(runtime: Any, args: Any = None) -> int:
    """The default command: chat with the lead until Ctrl-D or /quit."""
    return Repl(runtime).run()
