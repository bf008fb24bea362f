"""The findings files of the registered ``-focused`` targets, shipped as package data.

Each ``*.toml`` here sets aside a package's known findings (the format is in
:mod:`rollcert.targets.findings`). They live inside the package, not in
``docs/``, so that ``rollcert certify textual-focused`` works from an installed
wheel as well as from a checkout; ``rollcert certify PLAIN --set-aside FILE``
takes the same file by path. There is no code here: the folder is a package
only so that setuptools installs the files with it.
"""
