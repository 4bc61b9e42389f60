"""tabwarden.host — hop 3's host: the native-messaging process Chrome launches (``main``).

It owns the I/O shells of the host's side of the chain: Chrome's stdio framing and the caller
origin check (``native``), process hardening (``hardening``), the private runtime directory, lock,
socket and run secret (``runtime``), the bridge socket's server with admission and the relay of
page-tool calls to the extension (``bridge``), and the extension's host calls — browser pairing,
host-key proof and what a WebAuthn tap authorises — as a catalogue (``host_calls``) of handlers
(``pairing``). Grants and narrowings are the trust operations' (``tabwarden.trust.operations``);
nothing here writes the trust record itself.
"""
