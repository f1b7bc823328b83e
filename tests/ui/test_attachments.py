"""Images and PDFs named in a prompt are attached to it: typed, quoted or with escaped
spaces as a terminal pastes a dragged file; the feed says what went; other words stay text;
paths outside the workdir obey the read deny rules; -p and the REPL both do it."""

from __future__ import annotations

import io
import os
from argparse import Namespace
from pathlib import Path

import pytest
from support.fallible import wire_runtime
from support.pictures import pdf, picture
from support.repl_harness import Harness, make_runtime
from support.stub_server import Reply, StubServer

from agent_cli.models.base import ImageBlock, ModelRequest
from agent_cli.models.scripted import Reply as ScriptedReply
from agent_cli.ui.attachments import attach, candidates, for_prompt
from agent_cli.ui.headless import run_headless


@pytest.mark.parametrize(("prompt", "expected"), [
    ("what is in shot.png?", ["shot.png?"]),
    ("see 'Screen Shot 1.png' now", ["Screen Shot 1.png"]),
    ('see "/tmp/a b/c.pdf"', ["/tmp/a b/c.pdf"]),
    (r"see /tmp/Screen\ Shot\ 1.png please", ["/tmp/Screen Shot 1.png"]),
    ("file:///tmp/Screen%20Shot.png", ["/tmp/Screen Shot.png"]),
    ("don't read anything", []),
])
def test_paths_are_found_as_terminals_paste_them(prompt, expected):
    assert candidates(prompt) == expected


def test_images_and_pdfs_are_attached_and_other_files_stay_words(workdir):
    (workdir / "Screen Shot 1.png").write_bytes(picture("png", (1280, 720)))
    (workdir / "spec.pdf").write_bytes(pdf(2))
    (workdir / "notes.txt").write_text("text\n")
    (workdir / "broken.jpg").write_bytes(b"\xff\xd8\xff" + b"junk" * 20)
    found = attach(r"compare Screen\ Shot\ 1.png with spec.pdf, notes.txt and broken.jpg.",
                   workdir)
    assert found.lines[0] == "attached: Screen Shot 1.png (1280x720)"
    assert found.lines[1].startswith("attached: spec.pdf (2 pages, ")
    assert [b.type for b in found.blocks] == ["image", "document"]
    [problem] = found.problems
    assert problem.startswith("not attached: broken.jpg: broken.jpg looks like image/jpeg "
                              "but cannot be decoded")


def test_outside_the_workdir_the_read_deny_rules_decide(workdir, tmp_path):
    desk = tmp_path / "Desktop"
    desk.mkdir()
    (desk / "shot.png").write_bytes(picture("png", (100, 50)))
    (desk / "private").mkdir()
    (desk / "private" / "id.png").write_bytes(picture("png"))
    (desk / "link.png").symlink_to(desk / "private" / "id.png")
    os.mkfifo(desk / "pipe.png")
    prompt = f"{desk}/shot.png {desk}/private/id.png {desk}/link.png {desk}/pipe.png"

    found = attach(prompt, workdir, hidden=lambda: [desk / "private"])

    assert found.lines == [f"attached: {desk}/shot.png (100x50)"]
    assert len(found.blocks) == 1
    assert "is covered by a Read deny rule, denyRead or a credential store" in found.problems[0]
    assert all(p.startswith("not attached: ") for p in found.problems)
    assert len(found.problems) == 3  # the denied file, the link and the FIFO, each by name


def test_a_read_deny_rule_inside_the_workdir_keeps_a_picture_home(workdir, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    (workdir / "secrets").mkdir()
    (workdir / "secrets" / "badge.png").write_bytes(picture("png"))
    (workdir / "ok.png").write_bytes(picture("png", (10, 10)))
    (workdir / "alias.png").symlink_to("secrets/badge.png")
    with StubServer() as stub:
        rt = wire_runtime(workdir, stub, deny=["Read(secrets/**)"])
        try:
            found = for_prompt(rt, "compare secrets/badge.png, alias.png and ok.png")
        finally:
            rt.close()
    assert found.lines == ["attached: ok.png (10x10)"]
    assert [p.split(": ")[1] for p in found.problems] == ["secrets/badge.png", "alias.png"]
    assert all(p.endswith("is covered by a Read deny rule, denyRead or a credential store")
               for p in found.problems)


def test_p_attaches_an_image_before_the_prompt_text(workdir, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    (workdir / "shot.png").write_bytes(picture("jpeg", (640, 480)))
    with StubServer() as stub:
        stub.push(Reply("A red picture."))
        rt = wire_runtime(workdir, stub)
        out, err = io.StringIO(), io.StringIO()
        args = Namespace(prompt="what is in shot.png", wait=False, timeout=30.0,
                         output_format="stream-json")
        code = run_headless(rt, args, out=out, err=err)
    assert code == 0, err.getvalue()
    assert stub.rejections == []
    sent = stub.requests[0]["messages"][0]["content"]
    assert sent[0]["type"] == "image" and sent[0]["source"]["media_type"] == "image/jpeg"
    assert sent[-1]["text"].startswith("what is in shot.png")
    assert '"text": "attached: shot.png (640x480)"' in out.getvalue()


def test_the_repl_attaches_a_pasted_path_and_says_so(workdir: Path) -> None:
    (workdir / "my shot.png").write_bytes(picture("webp", (320, 200)))

    def sees(request: ModelRequest) -> ScriptedReply:
        blocks = request.messages[-1].content
        images = [b for b in blocks if isinstance(b, ImageBlock)]
        return ScriptedReply(f"I see {len(images)} picture(s): {images[0].label}")

    rt, model = make_runtime(workdir, {"lead": [sees]})
    h = Harness(rt).start()
    try:
        screen = h.command("describe 'my shot.png'", "I see 1 picture(s): my shot.png 320x200")
        assert "attached: my shot.png (320x200)" in screen
        model.assert_used_up()
    finally:
        h.quit()
