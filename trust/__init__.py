"""tabwarden.trust — the trust record every enforcement point re-reads, and the operations that
change it (contract: ``docs/trust-record.md``).

* ``keys``, ``keystore`` — the P-256 host key and where its private half is kept;
* ``canonical``, ``grants`` — the canonical JSON a grant signature covers; sign and verify;
* ``policy`` — the policy lattice (a restriction only narrows);
* ``record`` — strict parsing of ``trust.json`` (``TrustUnreadable``);
* ``verify`` — ``effective(document, public_key, now)``: pure, no I/O;
* ``record_file`` — fail-closed ``load`` and the one locked atomic ``update``;
* ``store`` — the writers, each one locked ``update``;
* ``reader`` — ``TrustReader``, the cached, fail-closed view; ``gate`` finds the key for it;
* ``refusal`` — the one rule hop 1 and hop 2 apply before anything runs;
* ``operations`` — every grant and narrowing as one recipe taking a person's proof;
* ``presence`` — WebAuthn ceremonies (begin/complete, time and randomness injected);
* ``audit`` — the append-only audit log.
"""
