"""``python -m rollcert.targets.protocol_schemas``: rewrite the shipped schema files from the tables."""

from rollcert.targets.protocol_schemas import write_schemas

if __name__ == "__main__":
    print(f"wrote {len(write_schemas())} schema files")
