"""Every machine error code as a named constant: the one spelling Python code uses.

The values are the ``code`` column of ``protocol/error_codes.json`` (numbered wire rows, then the
CLI-only list); ``tests/protocol/test_error_codes.py`` fails if this module and the table drift,
and if any Python source spells a code as a bare string literal. This module must never define a
code that is not in the table, and never compute one: a code is data a person can grep for.
"""

from __future__ import annotations

from typing import Final

# --- numbered rows: these reach the wire and MCP tool results (append-only) -------------------
INTERNAL_ERROR: Final = "internal_error"
BAD_REQUEST: Final = "bad_request"
UNKNOWN_ACTION: Final = "unknown_action"
EXTENSION_NOT_CONNECTED: Final = "extension_not_connected"
BRIDGE_REFUSED: Final = "bridge_refused"
PROTOCOL_MISMATCH: Final = "protocol_mismatch"
TIMEOUT: Final = "timeout"
MESSAGE_TOO_LARGE: Final = "message_too_large"
KILLED: Final = "killed"
CLIENT_NOT_PAIRED: Final = "client_not_paired"
ORIGIN_NOT_APPROVED: Final = "origin_not_approved"
CONFIRM_DENIED: Final = "confirm_denied"
POLICY_DENIED: Final = "policy_denied"
TAB_NOT_FOUND: Final = "tab_not_found"
BUSY: Final = "busy"
TRUST_UNREADABLE: Final = "trust_unreadable"
TAB_NOT_OWNED: Final = "tab_not_owned"
NOT_PAIRED: Final = "not_paired"
BAD_REF: Final = "bad_ref"
ELEMENT_NOT_FOUND: Final = "element_not_found"
NAVIGATION_CANCELLED: Final = "navigation_cancelled"
PRESENCE_REFUSED: Final = "presence_refused"
HOST_COMPROMISED: Final = "host_compromised"
POLICY_INVALID: Final = "policy_invalid"
USAGE: Final = "usage"
BAD_LABEL: Final = "bad_label"
PRESENCE_REQUIRED: Final = "presence_required"
KEYSTORE_UNAVAILABLE: Final = "keystore_unavailable"
KEYFILE_UNSAFE: Final = "keyfile_unsafe"
KEYFILE_CORRUPT: Final = "keyfile_corrupt"
HOST_KEY_INVALID: Final = "host_key_invalid"
UNSAFE_AUDIT_LOG: Final = "unsafe_audit_log"
CONFIRM_TIMEOUT: Final = "confirm_timeout"
TRUST_ROLLED_BACK: Final = "trust_rolled_back"
STORAGE_FULL: Final = "storage_full"
DIALOG_OPEN: Final = "dialog_open"
DEBUGGER_DETACHED: Final = "debugger_detached"
EXTENSION_AWAY: Final = "extension_away"
COMMAND_LOST: Final = "command_lost"
RESULT_EVICTED: Final = "result_evicted"
TAB_LIMIT: Final = "tab_limit"
WRONG_ELEMENT: Final = "wrong_element"
FETCH_OFF: Final = "fetch_off"
FETCH_FAILED: Final = "fetch_failed"
PROVENANCE_REFUSED: Final = "provenance_refused"
SCREENSHOT_TOO_LARGE: Final = "screenshot_too_large"
HOST_NOT_INSTALLED: Final = "host_not_installed"
HOST_CANNOT_START: Final = "host_cannot_start"
POPUP_BLOCKED: Final = "popup_blocked"
ELEMENT_COVERED: Final = "element_covered"
AMBIGUOUS: Final = "ambiguous"
ELEMENT_NOT_VISIBLE: Final = "element_not_visible"
ELEMENT_NOT_STABLE: Final = "element_not_stable"
ELEMENT_DISABLED: Final = "element_disabled"
WAIT_NOT_MET: Final = "wait_not_met"
TOOL_NOT_ENABLED: Final = "tool_not_enabled"
SCRIPT_ERROR: Final = "script_error"
RESULT_TOO_LARGE: Final = "result_too_large"
CLIENT_REVOKED: Final = "client_revoked"

# --- CLI-only: a terminal error line and an exit status, never the wire --------------------
UNSAFE_RUNTIME_DIR: Final = "unsafe_runtime_dir"
NOT_A_TERMINAL: Final = "not_a_terminal"
CEREMONY_DECLINED: Final = "ceremony_declined"
ALREADY_PAIRED: Final = "already_paired"
BROWSER_NOT_FOUND: Final = "browser_not_found"
EXTENSION_NOT_FOUND: Final = "extension_not_found"
DEMO_FAILED: Final = "demo_failed"
INSTALL_FAILED: Final = "install_failed"
INSTALL_UNKNOWN_BROWSER: Final = "install_unknown_browser"
INSTALL_UNSUPPORTED_PLATFORM: Final = "install_unsupported_platform"
INSTALL_FOREIGN_MANIFEST: Final = "install_foreign_manifest"
INSTALL_INTERPRETER_CANNOT_IMPORT: Final = "install_interpreter_cannot_import"
INSTALL_UNSAFE_PATH: Final = "install_unsafe_path"
ORIGIN_REFUSED: Final = "origin_refused"
HOST_ALREADY_RUNNING: Final = "host_already_running"
KEYSTORE_ERROR: Final = "keystore_error"
HOST_KEY_EXISTS: Final = "host_key_exists"
SPAWNER_LIST_UNSAFE: Final = "spawner_list_unsafe"
SECOND_FACTOR_LOST: Final = "second_factor_lost"
SESSION_GONE: Final = "session_gone"
SESSION_REFUSED: Final = "session_refused"

#: The numbered codes, in table order.
WIRE_CODES: Final = (
    INTERNAL_ERROR,
    BAD_REQUEST,
    UNKNOWN_ACTION,
    EXTENSION_NOT_CONNECTED,
    BRIDGE_REFUSED,
    PROTOCOL_MISMATCH,
    TIMEOUT,
    MESSAGE_TOO_LARGE,
    KILLED,
    CLIENT_NOT_PAIRED,
    ORIGIN_NOT_APPROVED,
    CONFIRM_DENIED,
    POLICY_DENIED,
    TAB_NOT_FOUND,
    BUSY,
    TRUST_UNREADABLE,
    TAB_NOT_OWNED,
    NOT_PAIRED,
    BAD_REF,
    ELEMENT_NOT_FOUND,
    NAVIGATION_CANCELLED,
    PRESENCE_REFUSED,
    HOST_COMPROMISED,
    POLICY_INVALID,
    USAGE,
    BAD_LABEL,
    PRESENCE_REQUIRED,
    KEYSTORE_UNAVAILABLE,
    KEYFILE_UNSAFE,
    KEYFILE_CORRUPT,
    HOST_KEY_INVALID,
    UNSAFE_AUDIT_LOG,
    CONFIRM_TIMEOUT,
    TRUST_ROLLED_BACK,
    STORAGE_FULL,
    DIALOG_OPEN,
    DEBUGGER_DETACHED,
    EXTENSION_AWAY,
    COMMAND_LOST,
    RESULT_EVICTED,
    TAB_LIMIT,
    WRONG_ELEMENT,
    FETCH_OFF,
    FETCH_FAILED,
    PROVENANCE_REFUSED,
    SCREENSHOT_TOO_LARGE,
    HOST_NOT_INSTALLED,
    HOST_CANNOT_START,
    POPUP_BLOCKED,
    ELEMENT_COVERED,
    AMBIGUOUS,
    ELEMENT_NOT_VISIBLE,
    ELEMENT_NOT_STABLE,
    ELEMENT_DISABLED,
    WAIT_NOT_MET,
    TOOL_NOT_ENABLED,
    SCRIPT_ERROR,
    RESULT_TOO_LARGE,
    CLIENT_REVOKED,
)
#: The CLI-only codes, in table order.
CLI_ONLY_CODES: Final = (
    UNSAFE_RUNTIME_DIR,
    NOT_A_TERMINAL,
    CEREMONY_DECLINED,
    ALREADY_PAIRED,
    BROWSER_NOT_FOUND,
    EXTENSION_NOT_FOUND,
    DEMO_FAILED,
    INSTALL_FAILED,
    INSTALL_UNKNOWN_BROWSER,
    INSTALL_UNSUPPORTED_PLATFORM,
    INSTALL_FOREIGN_MANIFEST,
    INSTALL_INTERPRETER_CANNOT_IMPORT,
    INSTALL_UNSAFE_PATH,
    ORIGIN_REFUSED,
    HOST_ALREADY_RUNNING,
    KEYSTORE_ERROR,
    HOST_KEY_EXISTS,
    SPAWNER_LIST_UNSAFE,
    SECOND_FACTOR_LOST,
    SESSION_GONE,
    SESSION_REFUSED,
)
