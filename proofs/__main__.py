"""``python -m rollcert.proofs``: the same as ``rollcert prove``."""

from rollcert.proofs.cli import main

raise SystemExit(main())
