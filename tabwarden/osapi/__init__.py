"""Every OS-specific call tabwarden makes, behind one door (docs/adr/0020-macos-port.md).

Peer credentials on the Unix socket, pinning a process against PID reuse, reading what a process
executes (its image, argv, environment, working directory, memory map, start time), hardening
ourselves, the controlling terminal and the keyring's needs: each is one function here, and no
module outside ``tabwarden/osapi/`` makes such a call (tests/test_platform_module.py reads every
module to hold that). The implementation is chosen once, by ``sys.platform``: ``linux.py``, else
``unsupported.py``, whose security calls refuse with ``Unsupported`` (fail closed). A port is one
new file with ``unsupported.py``'s names and signatures, and one line below.
"""

from __future__ import annotations

import sys

from tabwarden.osapi.unsupported import HINT, Unsupported

#: The platform string the native-messaging manifest locations are looked up by.
PLATFORM: str = sys.platform

if sys.platform.startswith("linux"):
    from tabwarden.osapi.linux import (
        CREDENTIALS_ANCILLARY_SIZE,
        NAME,
        RECVMSG_FLAGS,
        SCM_CREDENTIALS,
        boot_id,
        child_processes,
        cmdline,
        controlling_tty,
        create_time,
        cwd,
        environ,
        exchange_paths,
        executable,
        executable_identity,
        harden_process,
        keyring_needs_dbus_session,
        mapped_libpython,
        native_package_triple,
        open_executable,
        parent_pid,
        pass_credentials,
        peer_credentials,
        pin_exited,
        pin_pid,
        pin_process,
        process_owner,
        process_uids,
        socket_pin,
        start_ticks,
        user_processes,
    )
else:
    from tabwarden.osapi.unsupported import (
        CREDENTIALS_ANCILLARY_SIZE,
        NAME,
        RECVMSG_FLAGS,
        SCM_CREDENTIALS,
        boot_id,
        child_processes,
        cmdline,
        controlling_tty,
        create_time,
        cwd,
        environ,
        exchange_paths,
        executable,
        executable_identity,
        harden_process,
        keyring_needs_dbus_session,
        mapped_libpython,
        native_package_triple,
        open_executable,
        parent_pid,
        pass_credentials,
        peer_credentials,
        pin_exited,
        pin_pid,
        pin_process,
        process_owner,
        process_uids,
        socket_pin,
        start_ticks,
        user_processes,
    )

#: Whether this OS has an implementation: without one every security call refuses.
SUPPORTED: bool = NAME != "unsupported"


__all__ = [
    "CREDENTIALS_ANCILLARY_SIZE",
    "HINT",
    "NAME",
    "PLATFORM",
    "RECVMSG_FLAGS",
    "SCM_CREDENTIALS",
    "SUPPORTED",
    "Unsupported",
    "boot_id",
    "child_processes",
    "cmdline",
    "controlling_tty",
    "create_time",
    "cwd",
    "environ",
    "exchange_paths",
    "executable",
    "executable_identity",
    "harden_process",
    "keyring_needs_dbus_session",
    "mapped_libpython",
    "native_package_triple",
    "open_executable",
    "parent_pid",
    "pass_credentials",
    "peer_credentials",
    "pin_exited",
    "pin_pid",
    "pin_process",
    "process_owner",
    "process_uids",
    "socket_pin",
    "start_ticks",
    "user_processes",
]
