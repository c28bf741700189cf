"""The search parameters are declared once (`openxiv.service.search_params`) and the fronts publish
that declaration: the MCP tools' argument schemas (as ``tools/list`` answers them), the ``POST
/search`` and ``/v1/search`` body schemas and the ``GET /arxiv/`` query parameters (as the OpenAPI
schema holds them) and ``openxiv search``'s options carry each declared parameter with the declared
help, and every filter the use case checks (`FilterParams`) has a declaration. A front that words a
parameter on its own, or a filter added without a declaration, fails here."""

from __future__ import annotations

import asyncio
from dataclasses import fields
from typing import Any

import pytest

from openxiv.corpus.settings.model import Settings
from openxiv.service.http.app import create_app
from openxiv.service.library import Library
from openxiv.service.mcp.server import build_server
from openxiv.service.params import FilterParams
from openxiv.service.search_params import SEARCH_PARAMS, SearchParam
from openxiv.service.terminal.cli import search

FILTER_TOOLS = ("search_papers", "search_passages", "similar_papers", "facets")
"""The MCP tools that take the filters (each publishes the declared help of those it takes)."""


@pytest.fixture(scope="module")
def openapi(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("surface") / "index"  # never opened: the schema is the code's
    schema: dict[str, Any] = create_app(Settings.from_env({}), root).openapi()
    return schema


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    root = tmp_path_factory.mktemp("surface") / "index"
    server = build_server(Library(root, Settings.from_env({})), load=False)
    return {t.name: t.input_schema for t in asyncio.run(server.list_tools())}


def _declared(surface: str) -> dict[str, str]:
    """Parameter name (as that surface takes it) -> the declared help, for the parameters it offers."""
    out: dict[str, str] = {}
    for p in SEARCH_PARAMS:
        text = getattr(p, surface)
        if text is not None:
            out[p.argument if surface == "tool" else p.name] = text
    return out


def _body(openapi: dict[str, Any], model: str) -> dict[str, str | None]:
    props = openapi["components"]["schemas"][model]["properties"]
    return {name: prop.get("description") for name, prop in props.items()}


def test_every_filter_the_use_case_checks_is_declared() -> None:
    declared = {p.name for p in SEARCH_PARAMS}
    assert {f.name for f in fields(FilterParams)} <= declared
    assert len(declared) == len(SEARCH_PARAMS)  # one declaration a parameter


def test_the_search_tool_publishes_every_declared_tool_argument(tools: dict[str, dict[str, Any]]) -> None:
    props = tools["search_papers"]["properties"]
    assert {name: props[name].get("description") for name in _declared("tool")} == _declared("tool")
    assert props["size"]["default"] == 10 and props["offset"]["default"] == 0


@pytest.mark.parametrize("tool", FILTER_TOOLS)
def test_every_filter_tool_takes_the_declared_help(tools: dict[str, dict[str, Any]], tool: str) -> None:
    props = tools[tool]["properties"]
    shared = {name: text for name, text in _declared("tool").items() if name in props}
    assert {"categories", "authors", "date_from", "date_to"} <= set(shared)
    assert {name: props[name].get("description") for name in shared} == shared


@pytest.mark.parametrize(("model", "surface"), [("SearchRequest", "body"), ("V1SearchRequest", "v1")])
def test_the_search_bodies_publish_the_declared_help(
    openapi: dict[str, Any], model: str, surface: str
) -> None:
    published = _body(openapi, model)
    declared = _declared(surface)
    assert {name: published[name] for name in declared} == declared
    undeclared = {n for n, text in published.items() if text and n in {p.name for p in SEARCH_PARAMS}}
    assert undeclared <= set(declared), "a body field words a declared parameter on its own"


def test_get_arxiv_publishes_the_declared_help(openapi: dict[str, Any]) -> None:
    params = {p["name"]: p.get("description") for p in openapi["paths"]["/arxiv/"]["get"]["parameters"]}
    declared = _declared("arxiv")
    assert {name: params[name] for name in declared} == declared


def test_openxiv_search_takes_the_declared_help() -> None:
    options = {p.name: getattr(p, "help", None) for p in search.params}
    dest = {"use_fine_rerank": "fine_rerank"}  # the option is --fine-rerank/--no-fine-rerank
    declared = {dest.get(name, name): text for name, text in _declared("cli").items()}
    assert {name: options[name] for name in declared} == declared


def test_a_parameter_the_tools_name_otherwise_says_so() -> None:
    top_k = next(p for p in SEARCH_PARAMS if p.name == "top_k")
    assert top_k.argument == "size"
    assert SearchParam("venue").argument == "venue"
