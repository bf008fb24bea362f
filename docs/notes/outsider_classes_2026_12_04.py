"""Four more bug classes from issue 23's "Why", written for one measurement (docs/notes/round-2026-12-04.md).

Run from the repository root: python docs/notes/outsider_classes_2026_12_04.py x_one_byte_length,x_wrong_above_128,x_history_capped_12,x_insert_cut_to_8 10
Not a specimen module: registering them in a test process would add them to the kill matrix."""
import sys, time
from dataclasses import replace
from rollcert.specimens import register, load_all
from rollcert.specimens._base import InverseRecord, NaiveJournaledBuffer
from rollcert.stateful_tests.certify import certify

@register("x_one_byte_length", breaks={"R0"})
class OneByteLength(NaiveJournaledBuffer):
    """The record's inserted length is one byte: an insert of 256 bytes or more is undone short."""
    def _make_record(self, offset, delete_length, insert):
        r = super()._make_record(offset, delete_length, insert)
        return replace(r, inserted_length=r.inserted_length % 256)

@register("x_wrong_above_128", breaks={"R0"})
class WrongAbove128(NaiveJournaledBuffer):
    """Undo drops the last removed byte when more than 128 were removed."""
    def _undo_one(self, record):
        removed = record.removed[:-1] if len(record.removed) > 128 else record.removed
        self._bytes[record.offset : record.offset + record.inserted_length] = removed

@register("x_history_capped_12", breaks={"R0"})
class Capped12(NaiveJournaledBuffer):
    """Keeps only the newest 12 records, silently (unbounded as far as the caller knows)."""
    def _append_record(self, record):
        super()._append_record(record)
        if len(self._records) > 12:
            self._records.pop(0)

@register("x_insert_cut_to_8", breaks={"R0"})
class InsertCut8(NaiveJournaledBuffer):
    """An insert longer than 8 bytes keeps its first 8 (the record says all of it went in)."""
    def _apply(self, record, insert):
        self._bytes[record.offset : record.offset + len(record.removed)] = insert[:8]

names = sys.argv[1].split(",")
seeds = int(sys.argv[2])
specimens = load_all()
for name in names:
    target = specimens[name].target
    found, secs, lengths = 0, [], []
    for seed in range(seeds):
        t0 = time.perf_counter()
        cert = certify(target, profile="quick", seed=seed, only=("R0", "R1", "R2", "R3"))
        secs.append(time.perf_counter() - t0)
        violated = {p: r for p, r in cert.results.items() if r.verdict == "violated"}
        if violated:
            found += 1
            lengths.append(min(len(r.counterexample.steps) for r in violated.values() if r.counterexample))
        print(name, seed, sorted(violated), [r.verdict for r in cert.results.values()], flush=True)
    print(f"== {name}: found {found}/{seeds}, median s {sorted(secs)[len(secs)//2]:.2f}, lengths {lengths}", flush=True)
