from mcp_matrix.cli import main

raise SystemExit(main())
