"""A user's side of the course's hub without a browser: its REST API and a real terminal of a
user's server, through the hub's proxy, with the user's own token.

A terminal is opened as JupyterLab opens one: ``POST <server>/api/terminals``, then the
terminal's websocket ``<server>/terminals/websocket/<name>`` (terminado's messages
``["stdin", text]`` in, ``["stdout", text]`` out). The command is typed into the shell the
server runs for its terminals, with the environment that shell has, and what it printed and
its exit status are read back.

Names under ``localhost`` (``<user>.localhost``, the hub's one origin per user) are reached
on 127.0.0.1 with the name as the request's ``Host``, as Chromium resolves them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
import secrets
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit, urlunsplit

# what a terminal paints around its text: colours, cursor moves, titles, carriage returns
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[=>()][0-9A-Za-z]?|\r"
)


def _direct(url: str) -> tuple[str, dict[str, str]]:
    """``url`` with a ``*.localhost`` host sent to 127.0.0.1, and the Host header it needs."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        netloc = "127.0.0.1" + (f":{parts.port}" if parts.port else "")
        return urlunsplit(parts._replace(netloc=netloc)), {"Host": parts.netloc}
    return url, {}


def request(
    url: str, token: str, method: str = "GET", body: dict | None = None, timeout: float = 60
) -> tuple[int, str]:
    """One request with ``Authorization: token``: its status and text (errors included)."""
    target, headers = _direct(url)
    if token:
        headers["Authorization"] = f"token {token}"
    data = None
    if body is not None or method in ("POST", "PUT", "PATCH"):
        data = json.dumps(body or {}).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(target, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode("utf-8", "replace")


def server_url(hub_url: str, user: str, token: str) -> str:
    """The user's server as the hub's API gives it (``http://<user>.localhost:<port>/user/
    <user>/`` with one origin per user, ``/user/<user>/`` on the hub's host without)."""
    status, text = request(f"{hub_url}/hub/api/users/{user}", token)
    assert status == 200, (status, text)
    found = json.loads(text).get("server")
    assert found, f"no server of {user} runs: {text}"
    return found if found.startswith("http") else hub_url + found


async def _session(ws_url: str, headers: dict[str, str], command: str, timeout: float):
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    conn = await websocket_connect(HTTPRequest(ws_url, headers=headers, connect_timeout=30))
    tag = secrets.token_hex(4)
    start, end = f"PE{tag}BEGIN", f"PE{tag}END"
    conn.write_message(json.dumps(["set_size", 50, 250, 600, 800]))
    # the markers are printed from two halves, so the shell's echo of the line never
    # matches them
    typed = (
        f"stty -echo; printf '\\n%s%s\\n' PE{tag} BEGIN; {command}; "
        f"printf '\\n%s%s:%d\\n' PE{tag} END $?\r"
    )
    conn.write_message(json.dumps(["stdin", typed]))
    seen, deadline = "", time.monotonic() + timeout
    pattern = re.compile(re.escape(start) + r"\n(.*?)\n" + re.escape(end) + r":(\d+)\n", re.DOTALL)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            conn.close()
            raise TimeoutError(f"no end of `{command}` after {timeout:.0f} s:\n{seen[-3000:]}")
        msg = await asyncio.wait_for(conn.read_message(), left)
        if msg is None:
            raise ConnectionError(f"the terminal closed during `{command}`:\n{seen[-3000:]}")
        kind, *rest = json.loads(msg)
        if kind == "stdout":
            seen += _ESCAPES.sub("", rest[0])
            found = pattern.search(seen)
            if found:
                conn.close()
                return int(found.group(2)), found.group(1)
        elif kind == "disconnect":
            raise ConnectionError(f"the terminal ended during `{command}`:\n{seen[-3000:]}")


def terminal(server: str, token: str, command: str, timeout: float = 900) -> tuple[int, str]:
    """``command`` typed into a new terminal of ``server`` (the user's server URL, ending in
    ``/``): its exit status and what it printed. The terminal is closed after."""
    status, text = request(server + "api/terminals", token, "POST")
    assert status == 200, f"POST {server}api/terminals: {status} {text[:500]}"
    name = json.loads(text)["name"]
    ws_url, headers = _direct(server.replace("http", "ws", 1) + f"terminals/websocket/{name}")
    headers["Authorization"] = f"token {token}"
    try:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:  # its own event loop
            return pool.submit(asyncio.run, _session(ws_url, headers, command, timeout)).result()
    finally:
        request(server + f"api/terminals/{name}", token, "DELETE")
