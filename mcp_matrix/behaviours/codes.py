"""The finding codes behaviours declare: each behaviour module names every code it may emit.

A finding's ``code`` is what advice, materiality, triage and ``fix`` key on, so a code is part of
the vocabulary, not a free string: a module that emits a code it does not declare here, or a
finding whose behaviour's module does not declare its code, fails
``tests/behaviours/test_finding_codes.py`` (the behaviours' source and every profile's discovery
over the hazard probe sets), and so does a declared code with no fix advice (by its code, or by
a behaviour of the module that emits it).

``LOSS_CODES`` are the codes of the generic loss check (``rewrite.losses``): what a rewrite
removed or changed, ``<kind>-by-client``, for any behaviour.
"""

from __future__ import annotations

LOSS_CODES = frozenset({"removed-by-client", "changed-by-client"})

# behaviour module (mcp_matrix/behaviours/<name>.py) -> the finding codes its behaviours emit
DECLARED: dict[str, frozenset[str]] = {
    "agent_framework": frozenset({"client-refused"}),
    "amp": frozenset({"name-sanitised"}),
    "adk": frozenset({"description-fenced"}),
    "calls": frozenset({"client-refused", "enum-over-cap", "pattern-too-costly", "stale-cache"}),
    "claude": frozenset({"property-key-refused", "tuple-items-refused"}),
    "cline": frozenset({"name-collision", "root-type-added"}),
    "codex": frozenset({"ref-cycle", "schema-unparsable", "type-narrowed", "walk-limit"}),
    "continue_cli": frozenset({"client-refused"}),
    "copilot": frozenset(
        {"name-collision", "name-collision-renamed", "name-sanitised", "name-shortened"}
        | {"root-replaced"}
    ),
    "descriptions": frozenset({"description-truncated", "root-combinator-described"}),
    "dialects": frozenset(
        {"dangling-ref", "made-required", "no-parameters", "not-normalised"}
        | {"schema-incompatible", "strict-failed", "strict-fallback", "type-defaulted"}
        | {"walk-limit"}
    ),
    "fantasy": frozenset({"walk-limit"}),
    "google": frozenset({"converter-error", "no-parameters", "ref-cycle", "walk-limit"}),
    "injected": frozenset({"property-shadowed"}),
    "keywords": frozenset(
        {"additional-properties-forced", "nullable-rewritten", "root-replaced", "type-changed"}
    ),
    "langchain_genai": frozenset({"converter-error", "no-parameters", "parameters-dropped"}),
    "llamaindex": frozenset({"client-refused", "list-rejected"}),
    "mcp_use": frozenset({"client-refused", "list-rejected"}),
    "lists": frozenset(
        {"list-rejected", "name-too-long", "over-tool-cap", "page-not-read"}
        | {"server-name-invalid", "too-many-tools"}
    ),
    "names": frozenset(
        {"name-collision", "name-collision-renamed", "name-invalid"}
        | {"name-sanitised", "name-shortened", "name-too-long"}
    ),
    "openai_agents": frozenset({"made-required", "strict-fallback"}),
    "openai_agents_js": frozenset(
        {"additional-properties-opened", "name-collision", "name-sanitised"}
    ),
    "outcomes": frozenset({"client-refused", "list-rejected", "walk-limit"}),
    "python_sdk": frozenset({"list-rejected"}),
    "qwen": frozenset({"name-sanitised", "name-shortened"}),
    "run_scope": frozenset({"run-aborted"}),
    "results": frozenset(
        {"invalid-structured-content", "missing-structured-content", "result-too-large"}
    ),
    "schema_limits": frozenset({"enum-over-cap"}),
    "semantic_kernel": frozenset(
        {"client-refused", "list-rejected", "name-collision", "name-sanitised"}
    ),
    "smolagents": frozenset({"client-refused", "list-rejected", "made-required", "name-sanitised"}),
    "schema_refs": frozenset({"external-ref"}),
    "schemas": frozenset(
        {"array-without-items", "items-added", "keyword-refused", "root-combinator"}
        | {"root-combinator-collapsed", "root-combinator-deleted", "root-combinator-flattened"}
    ),
    "metaschema": frozenset({"invalid-json-schema", "not-checked"}),
    "ref_rewrites": frozenset({"dangling-ref", "ref-cycle", "ref-unresolved", "walk-limit"}),
}

# Every code a behaviour may emit.
FINDING_CODES: frozenset[str] = frozenset().union(*DECLARED.values(), LOSS_CODES)


def declared(module: str) -> frozenset[str]:
    """The codes the behaviour module ``module`` (its short name) may emit, the loss codes too."""
    return DECLARED.get(module, frozenset()) | LOSS_CODES


__all__ = ["DECLARED", "FINDING_CODES", "LOSS_CODES", "declared"]
