"""A target module whose import fails with a SyntaxError (it compiles generated code)."""

exec(compile("def broken(:\n    pass\n", "generated_adapter.py", "exec"))
