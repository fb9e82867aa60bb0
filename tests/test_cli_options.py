"""The LLM endpoint options, declared once (pbsolve.cli.common.llm_options) and given to
every command that talks to an endpoint with the same names, bounds and defaults."""

from __future__ import annotations

from typing import Any

import pytest
import typer

from pbsolve.cli.common import LLMOptions, llm_options
from pbsolve.cli.main import app

ENDPOINT_OPTIONS = {
    "base_url": None, "model": None, "api_key_env": "OPENAI_API_KEY", "max_tokens": None, "system_prompt": None,
    "timeout": 300.0, "max_retries": 4, "backoff": 1.0, "concurrency": 4,
}  # fmt: skip


def _params(command: str) -> dict[str, Any]:
    group = typer.main.get_command(app)
    return {p.name: p for p in group.commands[command].params if p.name}


@pytest.mark.parametrize(
    ("command", "temperature"), [("generate", 0.7), ("answer", 0.0), ("loop", 0.0), ("rewrite", 0.7), ("audit", 0.0)]
)
def test_each_llm_command_takes_the_shared_endpoint_options(command, temperature):
    params = _params(command)
    expected = {k: v for k, v in ENDPOINT_OPTIONS.items() if not (command == "audit" and k == "model")}
    assert {name: params[name].default for name in expected} == expected
    assert params["temperature"].default == temperature
    assert params["concurrency"].opts == ["--concurrency"] and params["timeout"].opts == ["--timeout"]


def test_audit_names_its_model_with_judge_model_only():
    params = _params("audit")
    assert "model" not in params and params["judge_model"].opts == ["--judge-model"]


def test_the_command_receives_the_options_as_one_llmoptions():
    seen: list[LLMOptions] = []
    demo = typer.Typer()

    @demo.command()
    @llm_options(temperature=0.5)
    def ask(n: int = 1, *, llm: LLMOptions) -> None:
        seen.append(llm)

    from typer.testing import CliRunner

    result = CliRunner().invoke(demo, ["--n", "2", "--model", "m", "--concurrency", "3"])
    assert result.exit_code == 0, result.output
    assert seen == [LLMOptions(model="m", temperature=0.5, concurrency=3)]


def test_a_command_without_the_llm_parameter_is_refused_at_definition():
    with pytest.raises(TypeError, match="keyword-only parameter `llm: LLMOptions`"):

        @llm_options()
        def broken(n: int = 1) -> None:
            pass


def test_llmoptions_config_needs_a_model_and_reads_the_system_prompt_file(tmp_path):
    with pytest.raises(ValueError, match="--renderer llm needs --model"):
        LLMOptions().config(needed_by="--renderer llm")
    path = tmp_path / "system.txt"
    path.write_text("be brief", encoding="utf-8")
    assert LLMOptions(model="m", system_prompt=f"@{path}").config(needed_by="x").system_prompt == "be brief"
    with pytest.raises(ValueError, match="no such file"):
        LLMOptions(model="m", system_prompt=f"@{tmp_path / 'missing'}").config(needed_by="x")
