from tabwarden.cli import main

raise SystemExit(main())
