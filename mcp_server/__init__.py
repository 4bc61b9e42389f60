"""tabwarden.mcp_server — hop 1: the MCP server an agent spawns over stdio (``tabwarden mcp``).

It owns the MCP tool catalogue as data (``catalogue``) and its registration, every tool behind
the hop-1 gate by construction (``tools``: ``GatedTool``), the gate itself (``server``:
``ToolGuard``, applying ``tabwarden.trust.refusal``), the measurement of the program that
spawned it (``spawner``), the bridge socket's client with deadlines (``bridge_client``), coded
error results (``results``) and the upload sandbox (``uploads``). It never talks to Chrome
directly and never decides a grant.
"""
