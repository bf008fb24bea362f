"""In-process adapters. Each file adapts one kind of implementation."""
