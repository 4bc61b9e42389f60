"""Process hardening for the native-messaging host: no core dumps, not ptrace-attachable.

The host's memory holds the run secret (and later the host key). Like ssh-agent, it turns off
core dumps and, on Linux, marks itself non-dumpable, which also stops same-UID ptrace attaches
(without CAP_SYS_PTRACE) and makes /proc/<pid>/mem unreadable to other processes. Each step is
best effort where the OS does not offer it; the result says what took effect.
"""

from __future__ import annotations

from tabwarden import osapi

PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3  # Linux's prctl option: what a test reads the flag back with


def harden_process() -> dict[str, bool]:
    return osapi.harden_process()
