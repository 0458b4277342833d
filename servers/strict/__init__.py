"""Reference server for the call pipeline: it validates arguments against the ``inputSchema`` it
lists and answers with what its handler reads, so it is the server ``mcp_matrix.run.call_servers.SchemaServer``
models, running for real (``tests/test_pipeline_agreement.py``)."""
