"""Discovery behaviours: what a client does to ``tools/list`` before its model sees it.

Each behaviour is a pure function registered under the name profiles use. List-level
behaviours (gates, pagination, caps: ``lists``; names: ``names``) take and return a
``ListState``; per-schema rewrites (``schemas``, ``metaschema``, ``ref_rewrites``, ``keywords`` and the client algorithms in
``codex``, ``dialects``, ``google``) use ``schema_rewrite`` and are memoised by schema
fingerprint. Every rule is written up with its evidence in docs/clients/; the docstrings name
the page and section (``docs/clients/openai.md#codex``) or the calibration record.

None of these may raise on a server's schema, however hostile (``true``, a string, 5,000
levels, ``$ref`` cycles): the walks are iterative and bounded (mcp_matrix.behaviours.walk).
Importing this module registers them all.
"""

from __future__ import annotations

from mcp_matrix.behaviours import (
    adk,
    claude,
    codex,
    descriptions,
    dialects,
    google,
    injected,
    keywords,
    langchain_genai,
    lists,
    metaschema,
    names,
    openai_agents,
    pydantic_schema,
    python_sdk,
    ref_rewrites,
    schemas,
)

MODULES = (
    lists,
    names,
    schemas,
    metaschema,
    ref_rewrites,
    keywords,
    codex,
    dialects,
    google,
    descriptions,
    claude,
    injected,
    python_sdk,
    openai_agents,
    adk,
    pydantic_schema,
    langchain_genai,
)
