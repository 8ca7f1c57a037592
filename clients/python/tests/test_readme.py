"""The Python examples of the READMEs and docstrings run as written."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import textwrap
import unittest

from _support import PKG_ROOT, REPO_ROOT, Server, child_env, need

# The fenced python blocks that run as written: (file, section, how many).
# The README's loop, and docs/python.md's three examples (which were the
# README's "Python client" section before they moved to docs/).
EXAMPLES = [
    ("README.md", "## A Python loop", 1),
    ("docs/python.md", "## The ask/tell loop", 1),
    ("docs/python.md", "## As a pycma user", 1),
    ("docs/python.md", "## As an Optuna user", 1),
    ("docs/python.md", "## Constraints", 1),
]


def section_examples(path, section):
    """The fenced python blocks of a second-level section of a Markdown file
    of the repository (up to the next second-level heading)."""
    text = (REPO_ROOT / path).read_text(encoding="utf-8")
    start = text.find("\n" + section + "\n")
    if start < 0:
        return []
    body = text[start + len(section) + 2:]
    nxt = re.search(r"^## ", body, re.M)
    if nxt:
        body = body[: nxt.start()]
    return re.findall(r"^```python\n(.*?)^```", body, re.M | re.S)


def docstring_example(doc):
    """The first literal block (after a line ending in "::") of a docstring."""
    m = re.search(r"::\n\n((?:[ ]{4}.*\n|\n)+)", doc)
    return textwrap.dedent(m.group(1)) if m else None


def needs(code):
    """Skips (or fails under CI) when the code imports numpy or optuna and
    they are missing."""
    for module in ("numpy", "optuna"):
        if re.search(rf"^\s*(import|from) {module}\b", code, re.M):
            need(module)


class ReadmeTest(unittest.TestCase):
    def run_code(self, server, code, cwd, timeout=300):
        p = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                           env=child_env(SELFCMA_URL=server.url))
        self.assertEqual(p.returncode, 0, f"{code}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        return p.stdout

    def test_python_examples_run(self):
        blocks = []
        for path, section, count in EXAMPLES:
            found = section_examples(path, section)
            self.assertEqual(len(found), count, f'{path}, "{section}": {len(found)} python blocks, want {count}')
            blocks += [(f"{path} {section}", code) for code in found]
        for where, code in blocks:
            with self.subTest(where):
                self.assertIn("SELFCMA_URL", code)
                needs(code)
                with Server() as server, tempfile.TemporaryDirectory() as cwd:
                    self.run_code(server, code, cwd)
                    from selfcma import Client

                    sessions = Client(server.url).sessions()
                self.assertTrue(sessions, "the example created no session")
                if "optuna" not in code:
                    self.assertTrue(all(s["status"] == "stopped" for s in sessions), sessions)

    def test_client_readme_example_runs(self):
        text = (PKG_ROOT / "README.md").read_text(encoding="utf-8")
        code = re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)[0]
        self.assertIn("SELFCMA_URL", code)
        with Server() as server, tempfile.TemporaryDirectory() as cwd:
            out = self.run_code(server, code, cwd)
        self.assertIn("termination on target_fitness=", out)

    def test_docstring_examples_run(self):
        import selfcma

        docs = [("selfcma", selfcma.__doc__), ("selfcma.Client", selfcma.Client.__doc__)]
        try:
            need("optuna")
            import selfcma.optuna

            docs.append(("selfcma.optuna", selfcma.optuna.__doc__))
        except unittest.SkipTest as e:
            sys.stderr.write(f"[selfcma.optuna's example not run: {e}] ")
        with Server() as server, tempfile.TemporaryDirectory() as cwd:
            for name, doc in docs:
                with self.subTest(name):
                    code = docstring_example(doc)
                    self.assertIsNotNone(code, f"{name}: no example")
                    self.assertIn("SELFCMA_URL", code)
                    self.run_code(server, code, cwd, timeout=120)


if __name__ == "__main__":
    unittest.main()
