"""`acervo --help`: every verb has its own examples, every option and positional says what it is."""

from typing import Any

import pytest

from acervo.flows.cli import command, main
from acervo.pipelines.settings import Settings

VERBS = ["index", "delete", "watch", "schedule", "serve", "mcp", "query", "eval", "stats", "entities", "export", "map",
         "runs"]


def verbs() -> dict[str, Any]:
    """Each verb's command, by name."""
    return dict(command().commands)


def test_every_verb_is_listed():
    assert sorted(verbs()) == sorted(VERBS)


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_has_its_own_examples(verb, capsys):
    with pytest.raises(SystemExit) as done:
        main([verb, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    examples = out[out.index("examples:"):].splitlines()[1:]
    assert examples and all(f"acervo {verb} " in line for line in examples if line.strip())
    others = [v for v in VERBS if v != verb]
    assert not any(f"acervo {other} " in out for other in others)


@pytest.mark.parametrize("verb", VERBS)
def test_every_option_and_positional_has_help(verb):
    missing = [p.name for p in verbs()[verb].params if not (p.help or "").strip()]
    assert missing == []


def test_the_overall_help_has_a_short_examples_block(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    examples = [line for line in out[out.index("examples:"):].splitlines()[1:] if line.lstrip().startswith("acervo ")]
    assert 0 < len(examples) <= 4


@pytest.mark.parametrize("verb", ["index", "delete", "watch", "schedule"])
def test_every_setting_is_an_option_of_the_verbs_that_take_settings(verb):
    options = {opt for p in verbs()[verb].params for opt in p.opts}
    assert {f"--{name.replace('_', '-')}" for name in Settings.model_fields} | {"--config", "--reconfigure"} <= options


@pytest.mark.parametrize(("args", "scopes"), [(["--scope", "a", "b", "--json"], ["a", "b"]),
                                              (["--scope", "--json"], []), (["--json"], None)])
def test_scope_takes_every_value_up_to_the_next_option(args, scopes):
    parsed = verbs()["query"].make_context("query", ["Who?", "--db", "i.duckdb", *args]).params
    assert (parsed["scopes"], parsed["as_json"], parsed["question"]) == (scopes, True, "Who?")


def test_the_query_side_endpoint_has_its_own_name():
    for verb in ("query", "eval"):
        options = {opt for p in verbs()[verb].params for opt in p.opts}
        assert {"--query-embed-url", "--query-embed-model"} <= options and "--embed-url" not in options
