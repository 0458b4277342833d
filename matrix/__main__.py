from matrix.cli import main

raise SystemExit(main())
