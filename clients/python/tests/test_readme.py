"""The Python example of the repository's README runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import textwrap
import unittest

from _support import REPO_ROOT, Server, child_env

SECTION = "## Python client"


def readme_example():
    """The first fenced python block of the README's "Python client"
    section (up to the next second-level heading)."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    start = text.find("\n" + SECTION + "\n")
    if start < 0:
        return None
    body = text[start + len(SECTION) + 2:]
    nxt = re.search(r"^## ", body, re.M)
    if nxt:
        body = body[: nxt.start()]
    m = re.search(r"^```python\n(.*?)^```", body, re.M | re.S)
    return m.group(1) if m else None


def docstring_example(doc):
    """The first literal block (after a line ending in "::") of a docstring."""
    m = re.search(r"::\n\n((?:[ ]{4}.*\n|\n)+)", doc)
    return textwrap.dedent(m.group(1)) if m else None


class ReadmeTest(unittest.TestCase):
    def test_python_example_runs(self):
        code = readme_example()
        self.assertIsNotNone(code, f'README.md has no section "{SECTION}" with a ```python block')
        self.assertIn("SELFCMA_URL", code)
        with Server() as server, tempfile.TemporaryDirectory() as cwd:
            p = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=90,
                               env=child_env(SELFCMA_URL=server.url))
            self.assertEqual(p.returncode, 0, f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
            from selfcma import Client

            sessions = Client(server.url).sessions()
        self.assertTrue(sessions, "the example created no session")
        self.assertTrue(all(s["status"] == "stopped" for s in sessions), sessions)

    def test_docstring_examples_run(self):
        import selfcma

        with Server() as server, tempfile.TemporaryDirectory() as cwd:
            for name, doc in [("selfcma", selfcma.__doc__), ("selfcma.Client", selfcma.Client.__doc__)]:
                with self.subTest(name):
                    code = docstring_example(doc)
                    self.assertIsNotNone(code, f"{name}: no example")
                    self.assertIn("SELFCMA_URL", code)
                    p = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                                       timeout=60, env=child_env(SELFCMA_URL=server.url))
                    self.assertEqual(p.returncode, 0, f"{name}:\n{code}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")


if __name__ == "__main__":
    unittest.main()
