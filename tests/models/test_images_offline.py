"""The offline models take images and PDFs: they read a placeholder naming each, so a demo
or scripted session that meets a picture goes on as any other."""

from __future__ import annotations

from support.pictures import pdf, picture

from agent_cli.models.base import (
    Message,
    ModelRequest,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    collect,
)
from agent_cli.models.demo import DemoModel
from agent_cli.models.scripted import Reply, ScriptedModel
from agent_cli.tools.media import load_media


def _conversation() -> list[Message]:
    image = load_media(picture("png", (30, 20)), "shot.png").block
    document = load_media(pdf(1), "spec.pdf").block
    return [
        Message(role="user", content=[image, TextBlock(text="what is in shot.png?")]),
        Message(role="assistant", content=[ToolUseBlock(id="t1", name="read_file",
                                                        input={"path": "spec.pdf"})]),
        Message(role="user", content=[ToolResultBlock(
            tool_use_id="t1", content=[TextBlock(text="PDF spec.pdf"), document])]),
    ]


def test_the_demo_model_answers_a_conversation_with_pictures() -> None:
    request = ModelRequest(agent="lead", system="s", messages=_conversation(),
                           tools=[ToolSpec(name="read_file", description="r",
                                           input_schema={"type": "object"})])
    done = collect(DemoModel().stream(request))
    assert done.message.role == "assistant" and done.stop_reason in ("end_turn", "tool_use")


def test_the_scripted_model_sees_a_placeholder_for_each_part() -> None:
    seen: list[str] = []

    def reply(request: ModelRequest) -> Reply:
        [result] = request.messages[-1].content
        seen.append(result.text())
        return Reply("ok")

    model = ScriptedModel({"lead": [reply]})
    collect(model.stream(ModelRequest(agent="lead", system="s", messages=_conversation())))
    assert seen[0].startswith("PDF spec.pdf\n[PDF spec.pdf (1 page, ")


def test_an_offline_model_counts_a_picture_as_the_api_would_not_as_its_base64() -> None:
    from agent_cli.models.reply import request_tokens

    big = load_media(picture("png", (1500, 1500), noise=True), "noise.png").block
    assert len(big.source.data) > 1_000_000
    request = ModelRequest(agent="lead", system="s", messages=[
        Message(role="user", content=[big, TextBlock(text="what is it?")])])
    assert 1600 <= request_tokens(request) < 2000
