"""A real Memsense service for the tests, started from its own source by the shared tool
`../shared/tools/memsense-service` (PostgreSQL 16 with pgvector from PyPI `pgserver`, the
service's npm dependencies, all-MiniLM-L6-v2 behind a loopback embedding endpoint), on
127.0.0.1 only, on free ports, in a work folder of its own; stopped and removed at the end,
whatever happened. Nothing of Memsense is copied into this repository: the tool unpacks it
from the git directory `$MEMSENSE_GIT_DIR` into the work folder.

`start_service` returns a `RunningService`, or raises `Unavailable` with the exact reason
(a missing program, account, mirror or dataset; a package registry that cannot be reached),
which the fixture turns into a skip. Any other failure to start is an error with the tails of
the tool's logs.
"""
from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.memsense_db import free_port

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
TOOL = Path(os.environ.get("MEMSENSE_SERVICE_TOOL", SHARED / "tools" / "memsense-service" / "memsense-service"))
MIRROR = Path(os.environ.get("MEMSENSE_GIT_DIR", "/work/.mirror/OpenSenseNova+MemSense/repo"))
LOCOMO = Path(os.environ.get("MEMSENSE_LOCOMO", SHARED / "datasets" / "locomo" / "locomo-dev.json"))
START_TIMEOUT_S = 480  # a cold start (venv with pgserver, npm ci, the model) took 52 s here, alone
STEP_TIMEOUT_S = 240
TENANT, SCOPE = "default", "user"
NETWORK_FAULT = re.compile(r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|getaddrinfo|network", re.I)


class Unavailable(Exception):
    """What this machine lacks to run the service: the reason of the skip."""


@dataclass
class RunningService:
    work: Path
    env: dict[str, str]
    api: str
    database: str
    embedder: str
    started_in: float

    def ingest(self, dataset: Path, sample: int, sessions: str, user: str) -> float:
        """Memsense's own evaluation ingest (hybrid) of one LoCoMo sample; its duration in seconds,
        embeddings included (the script waits for the service's embedding jobs)."""
        t0 = time.monotonic()
        self._tool("ingest", str(self.work), str(dataset), str(sample), sessions, user, timeout=STEP_TIMEOUT_S)
        return time.monotonic() - t0

    def post(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """POST /v1/memory/search with `body` as it is: (HTTP status, the JSON answer)."""
        req = urllib.request.Request(self.api + "/v1/memory/search", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")

    def search(self, user: str, query: str, top_k: int = 4, **extra: Any) -> tuple[int, dict[str, Any]]:
        return self.post({"tenant_id": TENANT, "scope": SCOPE, "user_id": user, "query": query, "top_k": top_k,
                          **extra})

    def stop(self) -> None:
        """The tool's stop, then any process of ours it left (it stops at the first pid that is
        already gone), then the work folder."""
        ours = [int(p.read_text()) for p in (self.work / "run").glob("*.pid") if p.read_text().strip().isdigit()]
        postmaster = self.work / "pg" / "data" / "postmaster.pid"
        try:
            subprocess.run([str(TOOL), "stop", str(self.work)], env=self.env, capture_output=True, timeout=120,
                           check=False)
            if postmaster.is_file():  # PostgreSQL's own pid file: SIGINT is its fast shutdown
                ours.append(-int(postmaster.read_text().split()[0]))
            for pid in ours:
                try:
                    os.kill(abs(pid), signal.SIGINT if pid < 0 else signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    pass
            deadline = time.monotonic() + 30
            while postmaster.is_file() and time.monotonic() < deadline:
                time.sleep(0.2)
        finally:
            shutil.rmtree(self.work, ignore_errors=True)

    def _tool(self, *args: str, timeout: float) -> str:
        done = subprocess.run([str(TOOL), *args], env=self.env, capture_output=True, text=True, timeout=timeout,
                              check=False)
        if done.returncode:
            raise RuntimeError(f"memsense-service {args[0]} failed ({done.returncode}): {done.stderr.strip()}\n"
                               + log_tails(self.work))
        return done.stdout


def missing() -> list[str]:
    """What the tool needs and this machine lacks, each with its fix."""
    out = []
    if not TOOL.is_file():
        out.append(f"no memsense-service tool at {TOOL} (set MEMSENSE_SERVICE_TOOL)")
    if not MIRROR.is_dir():
        out.append(f"no Memsense git directory at {MIRROR} (set MEMSENSE_GIT_DIR)")
    if not LOCOMO.is_file():
        out.append(f"no LoCoMo dataset at {LOCOMO} (set MEMSENSE_LOCOMO)")
    for program, package in (("node", "nodejs"), ("npm", "npm"), ("python3.11", "python3.11"), ("curl", "curl"),
                             ("git", "git")):
        if shutil.which(program) is None:
            out.append(f"{program} is not installed (scripts/setup.sh --tests installs {package})")
    done = subprocess.run(["python3", "-c", "import requests"], capture_output=True, check=False)
    if done.returncode:  # Memsense's evaluation ingest runs on the system's python3
        out.append("python3 cannot import requests, which Memsense's ingest script needs "
                   "(scripts/setup.sh --tests installs python3-requests)")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            out.append("running as root, the tool runs PostgreSQL as the account postgres, which does not exist "
                       "(create it: useradd --system --no-create-home postgres)")
    return out


def work_folder(pytest_tmp: Path) -> Path:
    """The service's work folder. Under pytest's temporary folder, except as root: then PostgreSQL
    runs as `postgres`, which cannot enter pytest's private (0700) folders, so a folder of the
    system's temporary directory is made instead (and removed by `stop`)."""
    if os.geteuid() != 0:
        return pytest_tmp
    return Path(tempfile.mkdtemp(prefix="memsense-service-"))


def start_service(pytest_tmp: Path) -> RunningService:
    if (lack := missing()):
        raise Unavailable("; ".join(lack))
    work = work_folder(pytest_tmp)
    os.chmod(work, 0o755)
    ports = {"PG_PORT": free_port(), "EMBED_PORT": free_port(), "API_PORT": free_port()}
    env = {**os.environ, **{k: str(v) for k, v in ports.items()}}
    service = RunningService(work, env, f"http://127.0.0.1:{ports['API_PORT']}",
                             f"postgresql://postgres@127.0.0.1:{ports['PG_PORT']}/memsense",
                             f"http://127.0.0.1:{ports['EMBED_PORT']}/embed", 0.0)
    t0 = time.monotonic()
    try:
        service._tool("start", str(MIRROR), str(work), sys.executable, timeout=START_TIMEOUT_S)
    except BaseException as exc:
        reason, tails = unreachable(work), log_tails(work)
        service.stop()
        if reason:
            raise Unavailable(reason) from None
        if isinstance(exc, subprocess.TimeoutExpired):
            raise RuntimeError(f"memsense-service start took more than {START_TIMEOUT_S} s\n{tails}") from None
        raise
    service.started_in = time.monotonic() - t0
    return service


def unreachable(work: Path) -> str:
    """The registry the start could not reach, from the tool's logs ("" when that was not the cause)."""
    npm_log = work / "logs" / "npm.log"
    if npm_log.is_file():
        fault = next((line for line in npm_log.read_text(errors="replace").splitlines() if NETWORK_FAULT.search(line)),
                     None)
        if fault:
            return f"the npm registry could not be reached (npm ci: {fault.strip()[:200]})"
    venv = work / "pgvenv"
    if venv.is_dir() and not any(venv.glob("lib/python3.11/site-packages/pgserver")):
        return "pip could not install pgserver into the tool's venv (is the Python package index reachable?)"
    return ""


def log_tails(work: Path, lines: int = 8) -> str:
    out = []
    for log in sorted((work / "logs").glob("*.log")) + [work / "pg" / "postgres.log"]:
        if log.is_file():
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {log.name}\n" + "\n".join(tail))
    return "\n".join(out)
