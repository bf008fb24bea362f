"""A target module that calls ``sys.exit(7)`` while it is imported (as a
script-style module with a ``main()`` guard forgotten would)."""

import sys

sys.exit(7)
