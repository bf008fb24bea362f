"""What people and tools read: the certificate in text, Markdown, JSON, JUnit and
HTML (:mod:`~rollcert.reports.certificate`, :mod:`~rollcert.reports.html_certificate`),
the step-by-step walkthrough of a counterexample (:mod:`~rollcert.reports.explain`)
and the live progress display (:mod:`~rollcert.reports.progress`).

It sits above the engine (``rollcert.stateful_tests``), whose results it renders,
and below the command (``rollcert.command``), which chooses what to render.
"""
