"""The probe server: serves a given tool list byte for byte and echoes every call's arguments.

Used by ``mcp-matrix calibrate``. Written on the standard library, like ``faulty``, because
the official SDK server parses each tool into its pydantic ``Tool`` model and re-serialises
it (``exclude_none``, aliasing), which would change the raw JSON Schemas a probe exists to
send (a ``null`` ``properties``, a missing ``type``, unknown keys on the tool).
"""
