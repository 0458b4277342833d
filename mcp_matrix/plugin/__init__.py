"""The pytest plugin's parts (``mcp_matrix.pytest_plugin`` is the entry point pytest loads):
the plan a test session makes once (``plan``, shared across xdist workers by ``shared``) and
the matrix as pytest items (``items``)."""
