"""Process hardening for the native-messaging host: no core dumps, not ptrace-attachable.

The host's memory holds the run secret (and later the host key). Like ssh-agent, it turns off
core dumps and, on Linux, marks itself non-dumpable, which also stops same-UID ptrace attaches
(without CAP_SYS_PTRACE) and makes /proc/<pid>/mem unreadable to other processes. Each step is
best effort where the OS does not offer it; the result says what took effect.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import resource
import sys

PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3


def harden_process() -> dict[str, bool]:
    applied = {"no_core_dumps": False, "not_dumpable": False}
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        applied["no_core_dumps"] = True
    except (ValueError, OSError):
        pass
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0:
                applied["not_dumpable"] = libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0
        except OSError:
            pass
    return applied
