"""Reference MCP server for the raw-twin write path (docs/design.md#a-raw-twin-for-write-tools).

Three rich write tools (``memory_write``, ``dispatch_record``, ``context_feedback``)
with strict, evolving schemas, each paired with a raw twin ``<name>_raw`` whose only
argument is ``payload``, a JSON-serialised record, and whose schema never changes.
Both paths hand the record, whole and untouched, to one gateway function that
validates it against the current schema version and stores it in SQLite;
``gateway_records`` reads back what arrived.

``--version 2`` adds one optional field to each rich schema: the field a client that
cached the version-1 schema would strip. Run ``python -m matrix_servers.gateway``.
"""
