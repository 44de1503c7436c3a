"""A real Chromium driven over the Chrome DevTools Protocol (https://chromedevtools.github.io/devtools-protocol/),
for the tests that use a web UI as a person does: headless Chromium with a debugging port on loopback, one page,
clicks as mouse events at an element's place on the screen, typing as key input. The protocol's websocket is
spoken with `websockets` (dagster-webserver's uvicorn[standard] brings it), so no browser-automation package
is needed."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
from websockets.sync.client import connect

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


class Browser:
    """One headless Chromium with one page; `close()` (or the `with` block) ends the process it started."""

    def __init__(self, profile: Path, width: int = 1600, height: int = 1000):
        assert Path(CHROMIUM).exists(), ("Chromium is not installed: `make test` installs Debian's chromium "
                                         "package (apt-get install chromium)")
        profile.mkdir(parents=True, exist_ok=True)
        port_file = profile / "DevToolsActivePort"  # Chromium writes the port it chose here
        port_file.unlink(missing_ok=True)  # a profile used before keeps the last one's
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", f"--user-data-dir={profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            self.ws = connect(self._page_socket(port_file), max_size=None, open_timeout=30)
        except BaseException:
            self._end()
            raise
        self._ids = itertools.count(1)
        self.console_errors: list[str] = []
        self.send("Page.enable")
        self.send("Runtime.enable")

    def _page_socket(self, port_file: Path) -> str:
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            assert self.proc.poll() is None, f"Chromium exited ({self.proc.returncode})"
            assert time.monotonic() < deadline, "Chromium opened no debugging port within 60 s"
            time.sleep(0.2)
        port = port_file.read_text().split()[0]
        pages = [t for t in httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json() if t["type"] == "page"]
        return pages[0]["webSocketDebuggerUrl"]

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self._end()

    def _end(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def send(self, method: str, **params: Any) -> dict:
        """One protocol command and its result (events that arrive meanwhile are read and kept as needed)."""
        ident = next(self._ids)
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=120))
            if message.get("id") == ident:
                assert "error" not in message, f"{method}: {message['error']}"
                return message.get("result", {})
            if message.get("method") == "Runtime.exceptionThrown":
                self.console_errors.append(json.dumps(message["params"]["exceptionDetails"])[:500])

    def goto(self, url: str) -> None:
        self.send("Page.navigate", url=url)

    def js(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (awaited if it is a promise)."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def wait_for(self, expression: str, what: str, seconds: float = 120) -> Any:
        """Poll until the expression is truthy (the page is a React app: it renders when its data arrives);
        fails naming `what` and the page's text when it never is."""
        deadline = time.monotonic() + seconds
        error = ""
        while True:
            # A page still navigating has no body yet: an expression that throws is "not yet", not a failure
            # (the last error is kept for the message).
            result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
            if "exceptionDetails" in result:
                error = str(result["exceptionDetails"].get("exception", {}).get("description", ""))[:300]
            elif result["result"].get("value"):
                return result["result"]["value"]
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: not within {seconds:.0f} s (last error: {error or 'none'}); the page "
                                     f"shows:\n{self.text()[:3000]}")
            time.sleep(0.5)

    def text(self) -> str:
        return self.js("document.body ? document.body.innerText : ''") or ""

    def click_at(self, x: float, y: float) -> None:
        """A left click as the mouse makes it: moved there, pressed, released."""
        self.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def click(self, selector_js: str, what: str, seconds: float = 60) -> None:
        """Click the centre of the element the JavaScript expression finds (once it is on the page and
        visible), scrolled into view first."""
        box = self.wait_for(
            f"(() => {{ const el = {selector_js}; if (!el) return null; el.scrollIntoView({{block: 'center'}});"
            " const r = el.getBoundingClientRect(); return r.width && r.height ? [r.x + r.width / 2,"
            " r.y + r.height / 2] : null; })()", what, seconds)
        self.click_at(*box)

    def type_text(self, text: str) -> None:
        self.send("Input.insertText", text=text)

    def press(self, key: str, code: str, key_code: int) -> None:
        for kind in ("keyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", type=kind, key=key, code=code, windowsVirtualKeyCode=key_code)

    def screenshot(self, path: Path) -> None:
        import base64

        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))


def by_text(tag: str, text: str) -> str:
    """A JavaScript expression for the last `tag` element whose own visible text is exactly `text`
    (the innermost one: a button's label, not the toolbar around it)."""
    return (f"[...document.querySelectorAll({json.dumps(tag)})].filter(e => e.innerText && "
            f"e.innerText.trim() === {json.dumps(text)}).pop()")
