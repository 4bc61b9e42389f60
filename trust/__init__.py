"""tabwarden.trust — the trust record every enforcement point re-reads (issue 3 builds it out).

For now it owns only where the record lives: the per-user config directory.

The record itself (contract: ``docs/trust-record.md``):

* ``keys`` — the P-256 host key (``HostKey``, ``HostPublicKey``);
* ``canonical`` — the canonical JSON bytes a grant signature covers;
* ``grants`` — ``sign_grant`` / ``grant_is_valid``;
* ``policy`` — the policy lattice (``restrict`` only narrows);
* ``record`` — strict parsing of ``trust.json`` (``TrustUnreadable``);
* ``verify`` — ``effective(document, public_key, now)``: pure, no I/O;
* ``store`` — fail-closed ``load``, locked atomic ``update``, the writers and ``TrustReader``.
"""
