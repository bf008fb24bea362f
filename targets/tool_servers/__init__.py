"""Protocol servers for third-party edit tools that run in their own environments.

Each server is one file that needs only the standard library and the tool it
hosts, so it runs under the tool's own interpreter (a virtual environment that
has the tool, not rollcert): the tool's pinned dependencies never meet rollcert's.
"""
