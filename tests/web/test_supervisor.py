"""serve's supervision: a child that exits is started again, with a back-off that grows."""

from __future__ import annotations

import subprocess
import sys
import time

from webapp.site.supervisor import Backoff, SupervisedChild


def test_backoff_doubles_up_to_its_cap():
    backoff = Backoff(first=1.0, factor=2.0, longest=30.0)
    assert [backoff.delay(n) for n in range(1, 8)] == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


def test_a_dead_child_is_started_again_after_its_backoff():
    messages: list[str] = []
    command = [sys.executable, "-c", "import time; time.sleep(60)"]
    child = SupervisedChild("sleeper", lambda: subprocess.Popen(command), messages.append,
                            backoff=Backoff(first=0.2, healthy_after=60.0)).launch()
    first = child.process
    try:
        first.kill()
        first.wait()
        now = time.monotonic()
        child.check(now)
        assert child.process is first and child.restart_at == now + 0.2  # waiting out the back-off
        child.check(now + 0.1)
        assert child.process is first
        child.check(now + 0.2)
        assert child.process is not first and child.process.poll() is None and child.restarts == 1
        assert "exited with status -9" in messages[0] and "running again" in messages[1]
        child.process.kill()  # exits again at once: the next wait is twice as long
        child.process.wait()
        child.check(now + 0.3)
        assert child.restart_at == now + 0.3 + 0.4
    finally:
        child.process.kill()
        child.process.wait()
