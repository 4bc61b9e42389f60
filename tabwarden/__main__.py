from tabwarden.cli.entry import main

raise SystemExit(main())
