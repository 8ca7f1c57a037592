"""docs/python.md's "Optuna on PostgreSQL" runs as written: the study
created once, then three workers started together on one PostgreSQL
database of Optuna's own (a throwaway cluster), against a server whose
sessions are in another database of the cluster. Skips, saying why,
without Optuna, psycopg2 or PostgreSQL; fails instead when CI is set."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import tempfile
import unittest

from _support import REPO_ROOT, Server, child_env, need, pg_cluster

SECTION = "## Optuna on PostgreSQL"
WORKERS, TRIALS = 3, 60  # as the section says


def section_blocks():
    """The fenced blocks of the section, in order, as (language, code)."""
    text = (REPO_ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    start = text.find("\n" + SECTION + "\n")
    if start < 0:
        return []
    body = text[start + len(SECTION) + 2:]
    nxt = re.search(r"^## ", body, re.M)
    if nxt:
        body = body[: nxt.start()]
    return re.findall(r"^```(sh|python)\n(.*?)^```", body, re.M | re.S)


def tool_dir(d):
    """A directory for the front of PATH in which python3 and optuna are
    this interpreter's (a python3 of pyenv or a venv may lack Optuna)."""
    bindir = os.path.join(d, "bin")
    os.mkdir(bindir)
    scripts = {
        "python3": f'#!/bin/sh\nexec "{sys.executable}" "$@"\n',
        "optuna": f'#!/bin/sh\nexec "{sys.executable}" -c '
                  "'import sys; from optuna.cli import main; sys.argv[0] = \"optuna\"; sys.exit(main())' \"$@\"\n",
    }
    for name, text in scripts.items():
        p = os.path.join(bindir, name)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR)
    return bindir


class OptunaPostgresTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        global optuna
        optuna = need("optuna")
        need("psycopg2")  # Optuna's storage on PostgreSQL (python3-psycopg2)
        cls.pg = pg_cluster()

    def test_three_workers_started_together(self):
        blocks = section_blocks()
        self.assertEqual([lang for lang, _ in blocks], ["sh", "python", "sh"],
                         f'docs/python.md: the blocks of "{SECTION}"')
        (_, create), (_, worker), (_, start) = blocks
        self.assertIn("create-study", create)
        self.assertIn(f"n_trials={TRIALS}", worker)
        self.assertIn(f"for i in {' '.join(str(i + 1) for i in range(WORKERS))}", start)

        storage = self.pg.url(self.pg.create_db("optuna_docs"), scheme="postgresql")
        server = Server()
        server.db = self.pg.url(self.pg.create_db("selfcma_docs"))
        server.start()
        self.addCleanup(server.close)
        with tempfile.TemporaryDirectory() as d:
            env = child_env(SELFCMA_URL=server.url, OPTUNA_STORAGE=storage)
            env["PATH"] = tool_dir(d) + os.pathsep + env.get("PATH", "")
            with open(os.path.join(d, "worker.py"), "w") as f:
                f.write(worker)

            def sh(code):
                p = subprocess.run(["bash", "-e", "-c", code], cwd=d, env=env, capture_output=True, text=True,
                                   timeout=900)
                self.assertEqual(p.returncode, 0, f"{code}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
                return p.stdout

            sh(create)
            out = sh(start)
            logs = []
            for i in range(WORKERS):
                with open(os.path.join(d, f"worker-{i + 1}.log")) as f:
                    logs.append(f.read())
            for i, log in enumerate(logs):
                self.assertNotIn("Traceback", log, f"worker {i + 1} crashed")
                self.assertIn("worker done:", log, f"worker {i + 1}")
            self.assertNotIn("failed", out)

        study = optuna.load_study(study_name="demo", storage=storage)
        states = [t.state for t in study.trials]
        self.assertEqual(len(states), WORKERS * TRIALS)
        self.assertEqual(states.count(optuna.trial.TrialState.COMPLETE), WORKERS * TRIALS)
        # One session between the three workers, which counts every
        # trial that claimed a candidate (told, or held of the pending
        # generation).
        import selfcma.optuna as sampler_mod
        from selfcma import Client

        sessions = [s for s in Client(server.url).sessions() if s["name"].startswith("optuna")]
        self.assertEqual(len(sessions), 1, sessions)
        es = Client(server.url).session(sessions[0]["id"])
        claimed = [t for t in study.trials if sampler_mod.CLAIM_ATTR in t.system_attrs]
        self.assertGreater(len(claimed), WORKERS * TRIALS - 10)
        held = len((es.info.get("partial") or {}).get("indices") or [])
        self.assertEqual(es.evaluations + held, len(claimed))
        self.assertLess(study.best_value, 1e-2)  # the box's centre, where the session starts, has f = 0.27


if __name__ == "__main__":
    unittest.main()
