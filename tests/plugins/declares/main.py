"""declares: a test plugin that declares what its settings slice (`initialize.config`) says,
under the name in its own manifest, so a test can install it under any name by copying it
and rewriting `name` (as `renamable`).

  hooks     the hook declarations to make, as they are: [{"name", "site", "points"}]
  commands  command names to declare; `/<command>` answers "<plugin>'s own /<command>"
  tools     the tool declarations to make, as they are (keys another host spells otherwise
            included): [{"name", ...}]
  answers   hook name -> what its `hook/decide` answers:
              {"outcome": ..., "value": ...}   that, as it is
              "deny-bash"                      deny a call of `bash`, continue otherwise
              "silent"                         never answer
            (a hook not named here continues)

Every `hook/decide` params it gets are appended to `<env.dataDir>/decided.jsonl`, so a test
can see what each hook was shown. Python 3 standard library only.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STATE = {"config": {}, "dir": "."}


def send(message):
    sys.stdout.write(json.dumps(dict(message, jsonrpc="2.0")) + "\n")
    sys.stdout.flush()


def own_name():
    with open(os.path.join(HERE, "plugin.json"), encoding="utf-8") as file:
        return json.load(file)["name"]


def handshake(name, params):
    config = params.get("config") or {}
    STATE["config"] = config
    STATE["dir"] = params["env"]["dataDir"]
    os.makedirs(STATE["dir"], exist_ok=True)
    commands = [
        {"name": command, "hint": "a command of " + name, "args": {"kind": "none"}, "instant": True, "family": "plugin"}
        for command in config.get("commands", [])
    ]
    return {
        "protocol": 5,
        "name": name,
        "version": "0.1.0",
        "commands": commands,
        "hooks": config.get("hooks", []),
        "tools": config.get("tools", []),
    }


def decide(params):
    with open(os.path.join(STATE["dir"], "decided.jsonl"), "a", encoding="utf-8") as file:
        file.write(json.dumps(params) + "\n")
    answer = STATE["config"].get("answers", {}).get(params.get("id"), {"outcome": "continue"})
    if answer == "silent":
        return None
    if answer == "deny-bash":
        payload = params.get("payload") or {}
        if payload.get("tool") == "bash":
            return {"outcome": "deny", "value": "no shell here"}
        return {"outcome": "continue"}
    return answer


def main():
    name = own_name()
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, params = message.get("method"), message.get("params") or {}
        if "id" not in message or method is None:
            continue
        if method == "initialize":
            send({"id": message["id"], "result": handshake(name, params)})
        elif method == "hook/decide":
            answer = decide(params)
            if answer is not None:
                send({"id": message["id"], "result": answer})
        elif method == "command/run":
            said = "%s's own /%s" % (name, params.get("name"))
            send({"id": message["id"], "result": {"outcome": {"kind": "text", "text": said}}})
        else:
            send({"id": message["id"], "error": {"code": -32601, "message": "no method " + method}})


if __name__ == "__main__":
    main()
