"""Drives a page in headless chromium through the DevTools protocol, for tests/html.rs.

Usage: python3 cdp.py URL < EXPRESSIONS. Opens URL, waits until the page's script has set
`document.body.dataset.ready`, then evaluates each line of stdin as a JavaScript expression
(awaiting promises) and prints its value as one line of JSON. The protocol runs over
--remote-debugging-pipe: commands on fd 3, replies on fd 4, each message ended by a NUL byte.
"""
import json
import os
import subprocess
import sys
import tempfile
import time


def main():
    url = sys.argv[1]
    to_browser_r, to_browser_w = os.pipe()
    from_browser_r, from_browser_w = os.pipe()

    def fds():
        os.dup2(to_browser_r, 3)
        os.dup2(from_browser_w, 4)

    # Chromium's helper processes may still write to the profile as it is removed.
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        browser = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--user-data-dir=" + profile, "--remote-debugging-pipe",
             "about:blank"],
            pass_fds=(3, 4), preexec_fn=fds, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        try:
            run(url, to_browser_w, from_browser_r)
        finally:
            try:
                browser.wait(timeout=5)
            except subprocess.TimeoutExpired:
                browser.kill()
                browser.wait()


def run(url, out, inp):
    pending = b""
    next_id = 0

    def call(method, params, session=None, tolerate=False):
        nonlocal pending, next_id
        next_id += 1
        msg = {"id": next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(out, json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in pending:
                chunk = os.read(inp, 1 << 20)
                if not chunk:
                    sys.exit("chromium closed the DevTools pipe")
                pending += chunk
            raw, pending = pending.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == next_id:
                if "error" in reply:
                    if tolerate:
                        return None
                    sys.exit("%s: %s" % (method, reply["error"]))
                return reply["result"]

    target = call("Target.createTarget", {"url": url})["targetId"]
    session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def evaluate(expression, tolerate=False):
        result = call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True}, session, tolerate)
        if result is None:
            return None
        if "exceptionDetails" in result:
            sys.exit("%s: %s" % (expression, result["exceptionDetails"]))
        return result["result"].get("value")

    # While the page loads, its execution context may be replaced under an evaluation: retry.
    deadline = time.monotonic() + 10
    while evaluate("document.body && document.body.dataset.ready", tolerate=True) != "1":
        if time.monotonic() > deadline:
            sys.exit("the page's script did not finish in 10 s")
        time.sleep(0.05)
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(evaluate(line.strip())), flush=True)
    # Closed through the protocol, the browser ends with its helper processes (it may close
    # the pipe before it answers).
    try:
        call("Browser.close", {}, tolerate=True)
    except SystemExit:
        pass


main()
