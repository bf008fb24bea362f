"""``python -m proofs``: the same as ``rollcert prove``."""

from proofs.cli import main

raise SystemExit(main())
