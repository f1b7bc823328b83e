"""Work that stays inside the boundary runs with no prompt at all (headless: a prompt would
be a denial), and the deny-rule bypass spellings, run sandboxed, harm nothing outside the
workspace even where the parser is fooled."""

from __future__ import annotations

import importlib.util
import os
import sys
import zipfile
from pathlib import Path

from support.sandbox import Shell, need_bwrap, sandboxed_runtime


def _deny_attacks():
    """The deny-rule bypass table of the permissions tests (one list for both suites)."""
    path = Path(__file__).parents[1] / "permissions" / "test_permissions_deny_attacks.py"
    spec = importlib.util.spec_from_file_location("deny_attack_table", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.RM_SPELLINGS, module.V


RM_SPELLINGS, V = _deny_attacks()


def _wheel(path) -> None:
    """A minimal pure-Python wheel (tinypkg 1.0) pip can install offline."""
    info = "tinypkg-1.0.dist-info"
    files = {
        "tinypkg/__init__.py": "VALUE = 42\n",
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                         "Tag: py3-none-any\n",
    }
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
        zf.writestr(f"{info}/RECORD", "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n")


def test_work_inside_the_workspace_runs_without_a_prompt(workdir, cleanup, outside):
    need_bwrap()
    cache = outside / "pip-cache"
    cache.mkdir()
    _wheel(outside / "tinypkg-1.0-py3-none-any.whl")
    rt = sandboxed_runtime(workdir, {"filesystem": {"allowWrite": [str(cache)]}})
    cleanup(rt)
    (workdir / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    shell = Shell(rt)
    steps = [
        "touch new.txt",
        f"{sys.executable} -m pytest -q -p no:cacheprovider test_one.py",
        f"{sys.executable} -m pip install -q --no-index --no-deps --no-cache-dir "
        f"--target {cache} {outside}/tinypkg-1.0-py3-none-any.whl",
        f"mkdir -p build && {sys.executable} -m compileall -q -b -d build test_one.py "
        "&& cp test_one.pyc build/",
    ]
    for command in steps:
        out = shell(command)
        assert not out.is_error, (command, out.content)
    assert (workdir / "new.txt").exists() and (workdir / "build" / "test_one.pyc").exists()
    assert (cache / "tinypkg" / "__init__.py").read_text() == "VALUE = 42\n"
    assert {e["source"] for e in rt.audit.entries()} == {"sandboxed"}


def test_deny_rule_bypass_spellings_harm_nothing_outside(workdir, cleanup, outside):
    need_bwrap()
    victim = outside / V
    rt = sandboxed_runtime(workdir, deny=["Bash(rm *)"])
    cleanup(rt)
    (workdir / "list.txt").write_text(f"{victim}\n")
    (workdir / "evil.sh").write_text(f"rm {victim}\n")
    (workdir / "ls").write_text(f"#!/bin/sh\nrm -f {victim}\n")
    (workdir / "ls").chmod(0o755)
    (workdir / "sub").mkdir()
    shell = Shell(rt)
    ran = 0
    for spelling in RM_SPELLINGS:
        victim.write_text("precious\n")
        out = shell(spelling.replace(V, str(victim)))
        assert victim.read_text() == "precious\n", (spelling, out.content)
        ran += "Denied" not in out.content
    assert ran > 0  # some spellings fooled the text rules; the sandbox still held


def test_programs_installed_under_tmp_stay_reachable_inside(workdir, cleanup, monkeypatch):
    """The private /tmp hides the host's: a tool installed there (a virtualenv in /tmp, as a
    CI clone may have) is bound back read-only, so the command finds it and cannot change it."""
    need_bwrap()
    import tempfile

    tools = Path(tempfile.mkdtemp(prefix="agent-cli-tools-", dir="/tmp"))
    try:
        script = tools / "hello-tool"
        script.write_text("#!/bin/sh\necho hello from /tmp\n")
        script.chmod(0o755)
        monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
        rt = sandboxed_runtime(workdir)
        cleanup(rt)
        shell = Shell(rt)
        out = shell("hello-tool")
        assert not out.is_error and "hello from /tmp" in out.content, out.content
        out = shell(f"echo x > {tools}/planted")
        assert out.is_error and not (tools / "planted").exists()
    finally:
        import shutil

        shutil.rmtree(tools, ignore_errors=True)
