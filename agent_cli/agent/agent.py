"""Agent: one conversation with a model and the turn loop that drives it.

`run_turn` adds the user's content, then repeats: ask `pre_call` (the team layer's hook for
inbox messages and stop requests), keep the context small (micro-compaction, auto-compaction,
identity re-injection), stream the model, and run the tools it asks for through the permission
gate, until the model stops asking, a tool ends the turn (`idle`), the round limit is reached,
the user interrupts, or the model fails. Everything the user sees leaves as events. Building
and checking the request and streaming the response live in request.py; running the tool
calls in tool_calls.py; the compaction steps in compaction.py; keeping the conversation and
its transcript in step in history.py; the settings, pre-call answer and result in turn.py.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import BadRequest, Interrupted, ModelError, UserError
from ..events import AgentError, Compacted, Event, EventBus, Notice, TurnFinished, UsageEvent
from ..models.base import (
    DocumentBlock,
    ImageBlock,
    Message,
    Model,
    ModelRequest,
    ResponseDone,
    ToolUseBlock,
    Usage,
)
from ..pricing import Ledger
from ..prompts import load_prompt
from ..tools.base import ToolContext, ToolOutput, ToolSet
from . import compaction, cutoff, media
from .context import ContextMeter
from .conversation import answers_for, text_blocks
from .fallback import feature_refused
from .history import History
from .identity import Identity
from .request import STRICT_ENV, PartialResponse, ToolSpecs, checked_messages, stream_with_retries
from .tool_calls import ToolRunner
from .transcript import load_conversation
from .turn import AgentSettings, PreCall, TurnResult

if TYPE_CHECKING:
    from ..permissions.gate import PermissionGate
    from ..permissions.hooks import HookRunner

__all__ = ["STRICT_ENV", "Agent", "AgentSettings", "PreCall", "TurnResult"]


class Agent:
    """One agent (the lead or a teammate). One turn at a time; `interrupt` from any thread."""

    def __init__(
        self,
        identity: Identity,
        system_prompt: str,
        model: Model,
        tools: ToolSet,
        gate: PermissionGate | None,
        events: EventBus,
        transcript_dir: Path | None = None,
        settings: AgentSettings | None = None,
        hooks: HookRunner | None = None,
        extra_identity: Callable[[], str] | None = None,
        resume: bool = False,
    ) -> None:
        self.identity = identity
        self.system_prompt = system_prompt
        self.model = model
        self.tools = tools
        self.gate = gate
        self.events = events
        self.settings = settings or AgentSettings()
        self.hooks = hooks  # PreToolUse / PostToolUse around every tool call
        self.extra_identity = extra_identity
        # () -> Workspace | None: where its tools work now (a teammate's task worktree)
        self.workspace: Callable[[], Any] | None = None
        self.usage = Usage()
        self.spend = Ledger()  # usage per model, for prices (pricing.py)
        self._history = History(identity.name, transcript_dir, self._emit)
        self._conv = self._history.conv  # read here; changed through _history or the loop
        self.delivered = self._history.delivered  # inbox message ids taken into it
        self._cancel = threading.Event()
        self._turn_lock = threading.Lock()
        self._reinject_identity = False
        self.context = ContextMeter(identity.name, self._emit)  # real counts, the window
        self._specs = ToolSpecs()
        self._host_ids = itertools.count(1)  # run_tool's call ids
        self._cut_continued = False  # this turn already continued once after max_tokens
        self._max_tokens_next: int | None = None  # a larger budget for the next request only
        if resume:
            self.restore()

    @property
    def name(self) -> str:
        return self.identity.name

    @property
    def conversation(self) -> list[Message]:
        """A copy of the messages (the live list is only changed by the turn loop)."""
        return self._conv.messages

    @property
    def cancel_event(self) -> threading.Event:
        """Set while the agent is being interrupted (hooks and tools watch it)."""
        return self._cancel

    @property
    def transcript_path(self) -> Path | None:
        transcript = self._history.transcript
        return transcript.path if transcript else None

    # -- public API ------------------------------------------------------------------

    def interrupt(self) -> None:
        """Stop the running turn as soon as possible (any thread). Cleared by the next turn."""
        self._cancel.set()

    def run_turn(
        self,
        content: str | list[str | ImageBlock | DocumentBlock],
        pre_call: Callable[[], PreCall | None] | None = None,
    ) -> TurnResult:
        """Run one user turn to its end; see the module docstring. Never raises ModelError.

        `content`: text, or texts and attached images / PDFs (sent first, as the API
        advises). Blank content is refused (UserError) unless a pending user turn (e.g.
        tool results of a stopped turn) is there to continue from.
        """
        items = [content] if isinstance(content, str) else content
        blocks = [b for b in items if not isinstance(b, str)]
        blocks += text_blocks([t for t in items if isinstance(t, str)])
        with self._turn_lock:
            last = self._conv.last()
            if not blocks and (last is None or last.role != "user"):
                raise UserError("nothing to send: the message is empty")
            self._cancel.clear()
            self._cut_continued, self._max_tokens_next = False, None
            self._add_user(blocks)
            result = self._loop(pre_call)
        self._emit(TurnFinished(self.name, result.stop_reason, result.rounds))
        return result

    def compact(self, reason: str = "manual") -> bool:
        """Summarize the older part now (/compact). False when there is nothing to compact.

        Raises UserError while a turn runs, ModelError if the summary request fails.
        """
        with self._idle_lock("compact"):
            self._cancel.clear()
            return self._compact(reason)

    def clear(self) -> None:
        """Forget the conversation (/clear); the transcript keeps it, with a clear marker."""
        with self._idle_lock("clear"):
            self._history.clear()
            self._reinject_identity = False
            self.context.forget(0)

    def restore(self, path: Path | None = None) -> int:
        """Rebuild the conversation from a transcript (default: this agent's own).

        Continues from the last compaction summary; the identity block is re-injected into
        the next request. Returns the number of messages restored.
        """
        path = path or self.transcript_path
        if path is None:
            raise UserError(f"{self.name} has no transcript to restore from")
        messages, problems = load_conversation(path)
        self.delivered.load(path)
        for problem in problems:
            self._emit(Notice(self.name, problem, level="warning"))
        with self._idle_lock("restore"):
            self._conv.replace(messages)
            self._reinject_identity = bool(messages)
            self.context.forget(compaction.estimate_tokens(messages, self.system_prompt))
        return len(messages)

    # -- the loop --------------------------------------------------------------------

    def _loop(self, pre_call: Callable[[], PreCall | None] | None) -> TurnResult:
        rounds, text, auto_compact = 0, "", True
        while True:
            if self._cancel.is_set():
                return self._interrupted(rounds, text)
            if rounds >= self.settings.max_rounds:
                self._emit(AgentError(self.name, f"stopped after {rounds} rounds", "max_rounds"))
                return TurnResult("max_rounds", text, rounds)
            plan = pre_call() if pre_call is not None else None
            if plan is not None and plan.stop:
                self._emit(Notice(self.name, f"turn stopped: {plan.stop}"))
                return TurnResult("stopped", text, rounds)
            if plan is not None and plan.inject:
                self._add_user(text_blocks(plan.inject))
            rounds += 1
            try:
                auto_compact = self._prepare_context(auto_compact) and auto_compact
                done = self._call_model()
            except Interrupted:
                return self._interrupted(rounds, text)
            except ModelError as exc:
                self._emit(AgentError(self.name, str(exc), exc.kind))
                return TurnResult("error", text, rounds, error=exc)
            if done.message.text().strip():
                text = done.message.text()
            stop = self._after_response(done)
            if stop == "interrupted":
                return self._interrupted(rounds, text)
            if stop is not None:
                return TurnResult(stop, text, rounds)

    def _interrupted(self, rounds: int, text: str) -> TurnResult:
        uses = self._conv.unanswered()
        if uses:
            self._add_user(answers_for(uses))
        return TurnResult("interrupted", text, rounds)

    def _prepare_context(self, auto_compact: bool) -> bool:
        """Micro-compact, auto-compact (when allowed) and re-inject identity before a request.

        Returns False when an auto-compaction failed (the turn does not retry it every round).
        """
        messages = self._conv.messages
        s = self.settings
        ok = True
        if compaction.micro_compact(messages, s.keep_recent_turns, s.micro_compact_min_chars):
            self._conv.replace(messages)
        if auto_compact and self._over_threshold():
            try:
                self._compact("auto")
            except ModelError as exc:
                self._emit(AgentError(self.name, f"compaction failed: {exc}", exc.kind))
                ok = False
        if self._reinject_identity:
            self._conv.prepend_text(self._identity_block())
            self._reinject_identity = False
        return ok

    def _request(self) -> ModelRequest:
        """The next request; a conversation that is not valid is repaired first (a bug)."""
        repaired = checked_messages(self._conv.messages, self.name, self._emit)
        if repaired is not None:
            self._conv.replace(repaired)
            if repaired and repaired[-1].role == "assistant":
                self._add_user(text_blocks(["continue"]))
        max_tokens, self._max_tokens_next = self._max_tokens_next, None
        return self._request_of(max_tokens)

    def _request_of(self, max_tokens: int | None = None) -> ModelRequest:
        return ModelRequest(
            agent=self.name,
            system=self.system_prompt,
            messages=media.for_request(self._conv.messages, self.settings.vision),
            tools=self._specs.of(self.tools),
            max_tokens=max_tokens or self.settings.max_tokens,
            thinking=self.settings.thinking.param() if self.settings.thinking else None,
            server_tools=self.settings.server_tools() if self.settings.server_tools else [],
        )

    def _call_model(self) -> ResponseDone:
        """Stream one response (retrying transient failures); on interrupt keep what text was
        streamed, then re-raise."""
        try:
            for fallback in range(3):  # each fallback turns one feature off, once
                try:
                    done = stream_with_retries(
                        self.model, self._request(), self._cancel, self._emit,
                        self.settings.retry)
                    break
                except BadRequest as exc:
                    if fallback == 2 or not feature_refused(
                            exc, self.settings, self._conv.messages, self.model.name,
                            self.name, self._emit):
                        raise
        except PartialResponse as exc:
            self._add_assistant(Message(role="assistant", content=text_blocks([exc.text])))
            raise
        self._count_usage(done.usage)
        return done

    def _after_response(self, done: ResponseDone) -> str | None:
        """Append the response and run its tools; the turn's stop reason, or None to go on.

        A call cut by max_tokens is reported and the model is told (in the next user turn)
        that it did not run; complete calls of the same response still run.
        """
        added = self._add_assistant(done.message)
        self.context.observed(done.usage, self._conv.messages, self.system_prompt)
        uses = added.tool_uses() if added is not None else []
        end_turn = self._run_tools(uses) if uses else False
        if uses and self._cancel.is_set():
            return "interrupted"
        if done.stop_reason == "max_tokens":
            if not self._continue_cut(done, bool(uses)):
                return "max_tokens"
            if not uses:
                return None
        if uses:
            return "idle" if end_turn else None
        if done.stop_reason == "pause_turn":
            self._add_user(text_blocks(["continue"]))
            return None
        if done.stop_reason == "refusal":
            self._emit(Notice(self.name, "the model declined to continue", level="warning"))
        return "end_turn"

    def _continue_cut(self, done: ResponseDone, ran_tools: bool) -> bool:
        """A response cut by max_tokens (see cutoff.py); False: stop the turn here."""
        plan = cutoff.plan(done.truncated_tool, ran_tools, self._cut_continued, self.settings)
        self._emit(AgentError(self.name, plan.message, "max_tokens"))
        if plan.note:
            self._add_user(text_blocks([plan.note]))
        self._cut_continued = self._cut_continued or (plan.again and not ran_tools)
        self._max_tokens_next = plan.max_tokens
        return plan.again

    # -- tools -----------------------------------------------------------------------

    def _run_tools(self, uses: list[ToolUseBlock]) -> bool:
        """Run each call in order; all results go into ONE user message. True = end turn."""
        runner = ToolRunner(self.name, self.tools, self.gate, self._emit, self._tool_context,
                            self.hooks)
        results, end_turn = runner.run_all(uses, self._cancel)
        self._add_user(results)
        return end_turn

    def run_tool(self, name: str, tool_input: dict[str, Any], purpose: str = "") -> ToolOutput:
        """A tool call outside a model turn (a custom command's !`cmd`, @file): the same hooks,
        gate and events as the model's; returned, never added to the conversation."""
        self._cancel.clear()
        use = ToolUseBlock(id=f"host_{next(self._host_ids)}", name=name, input=tool_input)
        context = lambda: replace(self._tool_context(), purpose=purpose)  # noqa: E731
        return ToolRunner(self.name, self.tools, self.gate, self._emit, context,
                          self.hooks).run_one(use)

    def _tool_context(self) -> ToolContext:
        ws = self.workspace() if self.workspace is not None else None
        return ToolContext(
            agent=self.name,
            workdir=ws.root if ws is not None else Path(self.identity.workdir),
            role=self.identity.role,
            cancel=self._cancel,
            workspace=ws,
        )

    # -- context ---------------------------------------------------------------------

    def _over_threshold(self) -> bool:
        """Is the next request's context past the auto-compaction threshold? (context.py:
        real counts, count_tokens only when the estimate cannot tell)"""
        tokens, threshold = self.context.measure(
            self.model, self._conv.messages, self.system_prompt, self.settings,
            self._request_of, self._cancel)
        return tokens > threshold

    def _compact(self, reason: str) -> bool:
        messages = self._conv.messages
        cut = compaction.choose_cut(messages, self.settings.keep_recent_turns)
        if cut is None:
            return False
        from ..permissions.hook_events import pre_compact

        pre_compact(self.hooks, self.name, reason)
        before = self.context.guess(messages, self.system_prompt)
        summarizer = compaction.Summarizer(
            self.model, self.name, load_prompt("compact"), min(self.settings.max_tokens, 4096)
        )
        summary, cost = summarizer.summarize(compaction.older_part(messages, cut), self._cancel)
        self._count_usage(cost)
        new = compaction.compacted(messages, cut, summary)
        after = compaction.estimate_tokens(new, self.system_prompt)
        self._history.compacted(reason, summary, new, before, after)
        self.context.forget(after)
        self._reinject_identity = True
        self._emit(Compacted(self.name, before, after))
        return True

    def _count_usage(self, usage: Usage) -> None:
        self.usage = self.usage.add(usage)
        self.spend.add(getattr(self.model, "name", ""), usage.model_dump())
        total = self.usage.total
        self._emit(UsageEvent(self.name, usage.input_tokens, usage.output_tokens, total))

    def _identity_block(self) -> str:
        extra = None
        if self.extra_identity is not None:
            try:
                extra = self.extra_identity()
            except Exception as exc:  # identity must still go out
                self._emit(Notice(self.name, f"extra identity failed: {exc}", level="warning"))
        return self.identity.block(extra)

    # -- bookkeeping -----------------------------------------------------------------

    def _add_user(self, blocks: list) -> None:
        self._history.add_user(blocks)

    def _add_assistant(self, message: Message) -> Message | None:
        return self._history.add_assistant(message)

    @contextmanager
    def _idle_lock(self, what: str) -> Iterator[None]:
        """Hold the turn lock for an operation that must not overlap a turn, or refuse."""
        if not self._turn_lock.acquire(blocking=False):
            raise UserError(f"{self.name} is running a turn; cannot {what} now")
        try:
            yield
        finally:
            self._turn_lock.release()

    def _emit(self, event: Event) -> None:
        self.events.emit(event)
