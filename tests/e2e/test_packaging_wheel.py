"""The wheel ships the system prompts: prompts/*.md land in it as agent_cli/prompts/, and
agent_cli imported from the unpacked wheel (no source checkout around) finds and loads them."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = ("lead", "teammate", "compact", "headless")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("hatchling", reason="building the wheel needs hatchling (test extra)")
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
         "--no-index", "-q", "-w", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (built,) = out.glob("agent_cli-*.whl")
    return built


def test_the_wheel_contains_every_prompt(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in PROMPTS:
        path = f"agent_cli/prompts/{name}.md"
        assert path in names, f"{path} is missing from {wheel.name}"
        source = (ROOT / "prompts" / f"{name}.md").read_bytes()
        assert zipfile.ZipFile(wheel).read(path) == source
    assert "agent_cli/prompts.py" in names


def test_an_unpacked_wheel_loads_its_own_prompts(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = (
        "import json, agent_cli\n"
        "from agent_cli.prompts import load_prompt, prompts_dir\n"
        f"texts = {{n: load_prompt(n) for n in {PROMPTS!r}}}\n"
        "print(json.dumps({'package': agent_cli.__file__, 'dir': str(prompts_dir()),\n"
        "                  'teammate': texts['teammate'][:40],\n"
        "                  'sizes': {n: len(t) for n, t in texts.items()}}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, capture_output=True,
                          text=True, timeout=60, env={"PYTHONPATH": str(site), "PATH": ""})
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert Path(found["package"]).is_relative_to(site)  # not the editable source checkout
    assert Path(found["dir"]) == site / "agent_cli" / "prompts"
    assert found["teammate"].startswith("You are $name,")
    assert all(found["sizes"][n] > 0 for n in PROMPTS)


def test_the_wheel_ships_the_price_table(wheel: Path) -> None:
    data = zipfile.ZipFile(wheel).read("agent_cli/pricing.json")
    assert data == (ROOT / "agent_cli" / "pricing.json").read_bytes()


def test_the_wheel_ships_the_context_window_table(wheel: Path) -> None:
    data = zipfile.ZipFile(wheel).read("agent_cli/models/windows.json")
    assert data == (ROOT / "agent_cli" / "models" / "windows.json").read_bytes()
