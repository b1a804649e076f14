"""``ast-hybrid launch -n N [--devices-per-process K] SCRIPT [ARGS...]``: N local processes training together.

What MXNet's ``tools/launch.py`` (and ``torchrun``) do on one machine: start N processes, each running
``SCRIPT ARGS`` as ``ast-hybrid run`` does (``import mxnet`` is ast-hybrid), joined by ``jax.distributed``
(a coordinator on a free local port, CPU collectives over gloo) before the script starts, so that
``mx.kv.create('dist_sync')`` sees ``num_workers == N`` and ``Trainer(..., kvstore=kv)`` sums the gradients
of every process.  ``--devices-per-process K`` gives each process K simulated CPU devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=K``).

Only process 0's standard output is shown (``--all-output``: every process's); every process's standard
error is.  Only process 0 writes ``save_parameters`` files (``ast_hybrid.distributed.writes_files``).  When
a process fails, the launcher says which and how, gives the others ``--timeout`` seconds to exit (they
usually fail at their next collective) and then stops them; its exit status is the failed process's.

On a cluster, start one process per host with your scheduler instead and call
``ast_hybrid.distributed.initialize()`` at the top of the script (``docs/distributed.md``).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import traceback

from ast_hybrid.cli import EXIT_CLEAN, EXIT_ERROR, err

__all__ = ["run", "worker"]

EXIT_FAILED = 1     # a launched script that raised
EXIT_PEER_LOST = 86     # a launched script that failed because another process had stopped (PeerLost)


def _free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _child_env(devices):
    env = dict(os.environ)
    flags = [f for f in env.get("XLA_FLAGS", "").split() if not f.startswith("--xla_force_host_platform_device_count")]
    env["XLA_FLAGS"] = " ".join(flags + [f"--xla_force_host_platform_device_count={devices}"])
    return env


def run(args) -> int:
    if args.num_processes < 1 or args.devices_per_process < 1:
        err("launch: -n and --devices-per-process must be at least 1")
        return EXIT_ERROR
    if not os.path.isfile(args.script):
        err(f"{args.script}: no such file")
        return EXIT_ERROR
    coordinator = f"localhost:{args.port or _free_port()}"
    env = _child_env(args.devices_per_process)
    procs = []
    for rank in range(args.num_processes):
        cmd = [sys.executable, "-m", "ast_hybrid.cli.launch", "--coordinator", coordinator,
               "--num-processes", str(args.num_processes), "--process-id", str(rank),
               *(["--force"] if args.force else []), "--", args.script, *args.args]
        quiet = rank != 0 and not args.all_output
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL if quiet else None))
    try:
        return _watch(procs, args.timeout)
    except KeyboardInterrupt:
        _stop(procs)
        return 130


def _watch(procs, timeout):
    """Wait for every process; after the first failure, give the rest ``timeout`` seconds, then stop them.
    The failure reported (and returned) is the cause: a process that failed because another had stopped
    (``EXIT_PEER_LOST``) is reported only when no other failed, since both often have exited by the time
    the launcher looks."""
    failed, deadline, stopped = None, None, False
    while True:
        codes = [p.poll() for p in procs]
        if all(c is not None for c in codes):
            break
        cause = _cause(codes)
        if cause is not None and (failed is None or (failed[1] == EXIT_PEER_LOST and cause[1] != EXIT_PEER_LOST)):
            failed = cause
            err(f"launch: process {failed[0]} of {len(procs)} failed ({_how(failed[1])}); the others get "
                f"{timeout:g} s to exit before they are stopped")
            deadline = deadline or time.monotonic() + timeout
        elif failed is not None and time.monotonic() > deadline:
            running = [i for i, c in enumerate(codes) if c is None]
            err(f"launch: stopping process{'es' if len(running) > 1 else ''} "
                f"{', '.join(map(str, running))}, still running {timeout:g} s after process {failed[0]} failed")
            _stop(procs)
            stopped = True
            break
        time.sleep(0.05)
    final = failed if stopped else _cause([p.returncode for p in procs])
    if final is None:
        return EXIT_CLEAN
    if final != failed:
        err(f"launch: process {final[0]} of {len(procs)} failed ({_how(final[1])})")
    return final[1] if 0 < final[1] < 256 else EXIT_ERROR


def _cause(codes):
    """``(index, code)`` of the failure to report among ``codes`` (None: still running), or None."""
    bad = [(i, c) for i, c in enumerate(codes) if c not in (None, 0)]
    return next((b for b in bad if b[1] != EXIT_PEER_LOST), bad[0] if bad else None)


def _how(code):
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def _stop(procs):
    for p in procs:
        if p.poll() is None:
            p.terminate()
    end = time.monotonic() + 5
    for p in procs:
        try:
            p.wait(max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def worker(argv=None) -> int:
    """One launched process: join the others, then run the script as ``ast-hybrid run`` does."""
    from ast_hybrid import distributed
    from ast_hybrid.cli import run as run_command

    p = argparse.ArgumentParser(prog="python -m ast_hybrid.cli.launch",
                                description="one process of `ast-hybrid launch` (started by it)")
    p.add_argument("--coordinator", required=True)
    p.add_argument("--num-processes", type=int, required=True)
    p.add_argument("--process-id", type=int, required=True)
    p.add_argument("--force", action="store_true")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    distributed.initialize(args.coordinator, args.num_processes, args.process_id, initialization_timeout=60)
    try:
        return run_command.run(args)
    except Exception as exc:
        # the script failed: say why and leave now, since jax.distributed's shutdown at exit waits for the
        # other processes (minutes, when one is gone)
        from ast_hybrid.parallel.data_parallel import PeerLost

        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_PEER_LOST if isinstance(exc, PeerLost) else EXIT_FAILED)


if __name__ == "__main__":
    sys.exit(worker())
