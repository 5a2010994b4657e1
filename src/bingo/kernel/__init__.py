"""The kernel: interfaces, registry, gate, hooks, dispatch, turn loop, notices and settings.
It never imports the bridge: a remote tool is just a tool."""
