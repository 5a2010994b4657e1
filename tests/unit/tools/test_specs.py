"""The built-in tools' specs are data (`bingo.tools._specs`, ADR-0043): each input schema
there is the one its tool's input Struct makes, so the data and the parser cannot drift."""

from __future__ import annotations

import json

import msgspec
import pytest

from bingo.tools._bash import BashInput
from bingo.tools._common import schema_of
from bingo.tools._edit import EditInput
from bingo.tools._glob import GlobInput
from bingo.tools._grep import GrepInput
from bingo.tools._read import ReadInput
from bingo.tools._specs import SPECS
from bingo.tools._write import WriteInput

INPUTS: dict[str, type[msgspec.Struct]] = {
    "read": ReadInput,
    "glob": GlobInput,
    "grep": GrepInput,
    "bash": BashInput,
    "write": WriteInput,
    "edit": EditInput,
}


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_a_tools_schema_is_the_one_its_input_struct_makes(name: str) -> None:
    made = schema_of(INPUTS[name])
    assert SPECS[name].input_schema == made, (
        f"put this in bingo/tools/_specs.py for {name}:\n{json.dumps(made, indent=1)}"
    )


def test_every_built_in_tool_has_a_spec_named_as_it_is() -> None:
    assert sorted(SPECS) == sorted(INPUTS)
    assert all(spec.name == name for name, spec in SPECS.items())


def test_the_agent_tools_schema_is_the_one_its_input_struct_makes() -> None:
    from bingo.run._agent import AgentInput, AgentTool

    made = schema_of(AgentInput)
    assert AgentTool().spec.input_schema == made, (
        f"put this in bingo/run/_agent.py's _SCHEMA:\n{json.dumps(made, indent=1)}"
    )
