"""Images and PDFs on the wire: what read_file and MCP tools return reaches the Messages API
as valid image and document blocks (the stub enforces the API's image rules), old ones are
elided, a transcript keeps them, and a model without vision gets one line, not a 400 loop."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from support.fallible import wire_runtime
from support.pictures import pdf, picture, size_of
from support.stub_rules import validate
from support.stub_server import STUB_MODEL, Fault, Reply, StubServer, ToolUse

from agent_cli.agent import compaction
from agent_cli.agent.transcript import load_conversation
from agent_cli.events import Notice
from agent_cli.models.base import ImageBlock, Message, TextBlock, ToolResultBlock
from agent_cli.tools.media import load_media


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


@contextmanager
def lead_reads(stub, workdir, *paths: str, then: list | None = None, notices=None):
    """A lead (through the real SDK to the stub) that has read `paths` with read_file."""
    calls = [ToolUse("read_file", {"path": p}) for p in paths]
    stub.push(Reply("Looking.", calls), *(then or [Reply("Seen.")]))
    rt = wire_runtime(workdir, stub)
    if notices is not None:
        rt.events.subscribe(lambda e: notices.append(e) if isinstance(e, Notice) else None)
    try:
        lead = rt.team.make_lead()
        lead.run_turn("look at these")
        yield lead
    finally:
        rt.close()


def test_a_screenshot_and_a_pdf_reach_the_model_as_valid_blocks(stub, workdir):
    (workdir / "shot.png").write_bytes(picture("png", (2560, 1440)))
    (workdir / "spec.pdf").write_bytes(pdf(2))
    with lead_reads(stub, workdir, "shot.png", "spec.pdf"):
        pass

    assert stub.rejections == []
    results = stub.requests[1]["messages"][-1]["content"]
    image_result, pdf_result = results[0], results[1]
    text, image = image_result["content"]
    assert text["text"].startswith("Image shot.png: 2560x1440 PNG")
    assert set(image) == {"type", "source"}  # our label never goes on the wire
    assert image["source"]["media_type"] == "image/png"
    assert size_of(image["source"]["data"]) == (1568, 882)
    document = pdf_result["content"][1]
    assert document["type"] == "document"
    assert base64.b64decode(document["source"]["data"]) == (workdir / "spec.pdf").read_bytes()


def test_the_stub_refuses_what_the_api_refuses():
    good = load_media(picture("png", (40, 30)), "a.png").block.wire()

    def body(*blocks):
        return {"model": STUB_MODEL, "max_tokens": 100,
                "messages": [{"role": "user", "content": [*blocks, {"type": "text",
                                                                    "text": "what is it?"}]}]}

    assert validate(body(good)) is None
    src = good["source"]
    cases = {
        "Extra inputs are not permitted": {**good, "label": "a.png"},
        "media_type: Input should be": {**good, "source": {**src, "media_type": "image/bmp"}},
        "does not match the provided media type": {
            **good, "source": {**src, "media_type": "image/jpeg"}},
        "invalid base64": {**good, "source": {**src, "data": "@@not base64@@"}},
        "image exceeds 5 MB maximum": {**good, "source": {**src, "data": "A" * (5 << 20) + "AAAA"}},
        "exceed max allowed size: 8000 pixels": load_media(
            picture("png", (8001, 10)), "w.png").block.wire() | {"source": {
                "type": "base64", "media_type": "image/png",
                "data": base64.b64encode(picture("png", (8001, 10))).decode()}},
        "the PDF specified was not valid": {"type": "document", "source": {
            "type": "base64", "media_type": "application/pdf", "data": src["data"]}},
    }
    for why, block in cases.items():
        assert why in (validate(body(block)) or ""), why
    wide = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                        "data": base64.b64encode(picture("png", (2001, 4)))
                                        .decode()}}
    assert validate(body(*[wide] * 20)) is None
    assert "for many-image requests: 2000 pixels" in validate(body(*[wide] * 21))


def test_a_model_without_vision_gets_one_line_and_placeholders_from_then_on(stub, workdir):
    (workdir / "shot.png").write_bytes(picture("png", (300, 200)))
    notices: list[Notice] = []
    refusal = Fault(400, "invalid_request_error", "This model does not support image input.")
    with lead_reads(stub, workdir, "shot.png", notices=notices,
                    then=[refusal, Reply("I cannot see pictures.")]) as lead:
        stub.push(Reply("Fine."))
        lead.run_turn("and now?")
        conversation = lead.conversation

    assert len(stub.requests) == 4  # the refused one, then one retry: no loop
    lines = [n.text for n in notices if "refused an image" in n.text]
    assert len(lines) == 1 and "lead gets text placeholders for them from now on" in lines[0]
    for later in stub.requests[2:]:
        result = later["messages"][2]["content"][0]
        assert [p["type"] for p in result["content"]] == ["text", "text"]
        assert result["content"][1]["text"] == ("[image shot.png 300x200: not shown: this "
                                                "model does not accept images or PDFs]")
    # the conversation itself still holds the picture (a transcript and a resume keep it)
    kept = [b for m in conversation for b in m.content if isinstance(b, ToolResultBlock)]
    assert kept[0].media()[0].source.media_type == "image/png"


def test_old_images_are_elided_like_big_results(workdir):
    image = load_media(picture("png", (90, 60)), "old.png").block
    result = ToolResultBlock(tool_use_id="t1", content=[TextBlock(text="seen"), image])
    old = Message(role="user", content=[result, ImageBlock(**image.model_dump())])
    messages = [old, Message(role="assistant", content=[{"type": "text", "text": "ok"}]),
                Message(role="user", content=[{"type": "text", "text": "next"}])]
    saved = compaction.micro_compact(messages, keep_recent=1, min_chars=2000)
    assert saved > 0
    first = messages[0].content
    assert first[0].text() == "seen\n[image old.png 90x60: elided; it was seen]"
    assert first[1].text == "[image old.png 90x60: elided; it was seen]"
    assert compaction.estimate_tokens(messages) < compaction.estimate_tokens([old])


def test_a_resumed_conversation_has_its_pictures(stub, workdir):
    (workdir / "shot.png").write_bytes(picture("gif", (50, 50)))
    with lead_reads(stub, workdir, "shot.png"):
        pass
    [path] = (workdir / ".team" / "transcripts").glob("lead*.jsonl")
    messages, problems = load_conversation(path)
    assert problems == []
    [result] = [b for m in messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert result.media()[0].source.media_type == "image/gif"
    assert result.media()[0].label == "shot.png 50x50"


def test_a_request_carries_only_the_newest_pictures_that_fit_its_size(stub, workdir,
                                                                      monkeypatch):
    from agent_cli.agent import media

    for name in ("a.png", "b.png", "c.png"):
        (workdir / name).write_bytes(picture("png", (200, 100)))
    one = len(load_media(picture("png", (200, 100)), "x").block.source.data)
    monkeypatch.setattr(media, "REQUEST_MEDIA_BYTES", 2 * one)
    with lead_reads(stub, workdir, "a.png", "b.png", "c.png"):
        pass
    assert stub.rejections == []
    results = stub.requests[1]["messages"][-1]["content"]
    kinds = [[p["type"] for p in r["content"]] for r in results]
    assert kinds == [["text", "text"], ["text", "image"], ["text", "image"]]
    assert results[0]["content"][1]["text"] == ("[image a.png 200x100: left out: newer images "
                                                "and PDFs fill the request]")
