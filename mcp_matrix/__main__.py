from mcp_matrix.commands.cli import main

raise SystemExit(main())
