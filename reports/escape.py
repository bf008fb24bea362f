"""One escaping rule per output format, for every string a target or a file controls.

A target's name and version, its error kinds and messages, the exception
classes it raises, a certificate read from a file: none of it is rollcert's own
text, and each output format has its own way of being forged by it (SPEC §8):

- **terminal** — control and format characters steer the screen (an ESC that
  clears it and paints "R0 passed" over a real exit 1; a right-to-left
  override): :func:`terminal`, which is :func:`rollcert.targets.adapter.visible`;
- **Markdown** — raw HTML, a comment opened and never closed, a line break that
  ends a table row and starts a forged one: :func:`markdown_text` (no line
  breaks, every character Markdown or HTML gives a meaning escaped),
  :func:`markdown_code` (a code span no backtick run can close) and
  :func:`markdown_fence` (a fenced block no line can close);
- **JUnit XML** — characters XML 1.0 does not allow make the whole file
  unreadable to a CI server: :func:`xml_text`;
- **HTML** — markup characters, and the control characters that steer a
  terminal when the page is read with ``cat`` (a replay command quoting a
  target's name held a raw ESC): :func:`html_text`.

Each renderer applies its format's rule to each such string, where it puts the
string in; rollcert's own words pass through unchanged.
"""

from __future__ import annotations

import html
import re

from rollcert.targets.adapter import visible

#: A terminal line: every control and format character written as an escape.
terminal = visible


def terminal_lines(text: str) -> str:
    """Several lines of such text (an explanation with a timeline): each line
    escaped, the line breaks between them kept."""
    return "\n".join(visible(line) for line in str.split(str(text), "\n"))


#: The ASCII punctuation that gives Markdown (CommonMark, GitHub's tables and
#: strikethrough) or the HTML inside it a meaning anywhere in a line; a backslash
#: makes each a literal character. (The characters that matter only at the start
#: of a line never get there: the text is always after rollcert's own words.)
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>&|~])")


def markdown_text(text: str) -> str:
    """``text`` as literal Markdown inline text: on one line (a line break would end
    a table row or a list item and start a forged one), with no HTML and no
    emphasis, links or table cells of its own."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", visible(str(text)))


def markdown_unescape(text: str) -> str:
    """What :func:`markdown_text` escaped, read back from a rendered page: every
    backslash it put before a special character taken away, and nothing else.
    The result is untrusted text again; escape it for wherever it goes next
    (stripping *every* backslash, as the matrix once did, turned an escaped
    ``\\|`` back into a table cell of the target's own making)."""
    return _MARKDOWN_SPECIAL_ESCAPED.sub(r"\1", str(text))


_MARKDOWN_SPECIAL_ESCAPED = re.compile(r"\\([\\`*_\[\]<>&|~])")


def markdown_code(text: str) -> str:
    """``text`` as a Markdown code span: nothing inside a code span is markup, so it
    needs no escapes, only delimiters longer than any run of backticks inside."""
    shown = visible(str(text))
    longest = max((len(run) for run in re.findall(r"`+", shown)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") or not shown.strip() else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def markdown_fence(text: str) -> str:
    """Several lines as a fenced code block whose fence is longer than any run of
    backticks in them, so no line can close it early; each line escaped for the
    terminal too (a Markdown file is also read with ``cat``)."""
    shown = terminal_lines(text)
    longest = max((len(run) for run in re.findall(r"`+", shown)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{shown}\n{fence}"


def html_text(text: str) -> str:
    """``text`` as HTML text or attribute value: every markup character escaped
    (quotes too), every control or format character written as an escape; line
    breaks kept (inside ``<pre>`` they are the lines of a counterexample)."""
    return html.escape(terminal_lines(text))


#: Characters XML 1.0 does not allow in a document (section 2.2): the C0 controls but
#: tab, line feed and carriage return; lone surrogates; U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` with every character XML 1.0 forbids written as an escape (the
    markup characters ``<``, ``&``, quotes are ElementTree's to escape), and the
    rest of what steers a terminal too (a CI page shows it as text)."""
    plain = str(text)
    return "\n".join(visible(line) for line in _NOT_XML.sub(lambda m: repr(m.group())[1:-1], plain).split("\n"))
