"""Gather real MCP tool lists from npm packages, for test corpora like tests/data/corpus_npm.json. Not the product.

For each package of a spec file: `npm install --prefix DIR PKG[@VERSION] --ignore-scripts`, start the server over
stdio (offline, placeholder credentials only, HOME set to a scratch folder), speak JSON-RPC itself: `initialize`,
`notifications/initialized`, `tools/list` following `nextCursor` through every page. No tool is ever called; the
server's process group is ended after. Each tool is kept exactly as published.

    python -m sevenmaps_pipeline.devtools.corpus_gather SPEC.json WORKDIR OUT.json

SPEC.json is a list of {"package": ..., "version": optional, "args": [...], "env": {...}, "cmd": optional [...]}:
`cmd` replaces the package's bin (``{PDIR}`` stands for the installed package's folder); `env` values must be
placeholders, never real credentials. OUT.json gets {"servers": [...], "skipped": [...]}, each server with its
package.json facts (description, mcpName, keywords, repository, license, homepage) and what it answered.
Only the npm registry is needed (for the installs); stdlib only.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROTOCOL = "2025-06-18"
TOOL_FIELDS = ("name", "title", "description", "annotations", "inputSchema", "outputSchema")


@dataclass
class Listing:
    """What a server answered: its initialize result and every tool, or why it did not."""

    ok: bool
    error: str | None = None
    protocol_version: str | None = None
    server_info: dict[str, Any] | None = None
    instructions: str | None = None
    pages: int = 0
    tools: list[dict[str, Any]] = field(default_factory=list)


class StdioSession:
    """A newline-delimited JSON-RPC session with one server process, bounded by a deadline."""

    def __init__(self, proc: subprocess.Popen[bytes], deadline: float) -> None:
        self.proc, self.deadline, self.buf = proc, deadline, b""

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def _answer_server_request(self, msg: dict[str, Any]) -> None:
        """Servers may ask the client things (roots, ping): answer minimally, never with data."""
        if msg["method"] == "roots/list":
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": {"roots": []}})
        elif msg["method"] == "ping":
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
        else:
            self.send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "not supported"}})

    def _next_message(self) -> dict[str, Any] | None:
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            try:
                msg = json.loads(line)
            except ValueError:
                continue  # a server printing logs to stdout: not protocol
            if isinstance(msg, dict):
                return msg
        return None

    def _read_more(self) -> None:
        assert self.proc.stdout is not None
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no answer before the deadline")
        ready, _, _ = select.select([self.proc.stdout], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                raise EOFError(f"server closed stdout (exit {self.proc.poll()})")
            self.buf += chunk
        elif self.proc.poll() is not None:
            raise EOFError(f"server exited {self.proc.returncode}")

    def request(self, rid: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request and wait for its answer (result or error)."""
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            msg = self._next_message()
            if msg is None:
                self._read_more()
            elif msg.get("id") == rid and ("result" in msg or "error" in msg):
                return msg
            elif "method" in msg and "id" in msg:
                self._answer_server_request(msg)


def _list_all(session: StdioSession, protocol: str) -> Listing:
    init = session.request(1, "initialize", {"protocolVersion": protocol, "capabilities": {},
                                             "clientInfo": {"name": "sevenmaps-corpus-gatherer", "version": "0.1"}})
    if "error" in init:
        return Listing(False, "initialize error: " + json.dumps(init["error"])[:500])
    res = init["result"]
    session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    out = Listing(True, None, res.get("protocolVersion"), res.get("serverInfo"), res.get("instructions"))
    cursor: str | None = None
    while out.pages <= 100:
        page = session.request(2 + out.pages, "tools/list", {"cursor": cursor} if cursor else {})
        out.pages += 1
        if "error" in page:
            return Listing(False, "tools/list error: " + json.dumps(page["error"])[:500])
        out.tools.extend(page["result"].get("tools", []))
        cursor = page["result"].get("nextCursor")
        if not cursor:
            break
    return out


def list_tools(cmd: list[str], env: dict[str, str], cwd: Path, *, timeout: float = 60.0,
               protocol: str = PROTOCOL, stderr_path: Path | None = None) -> Listing:
    """Start `cmd` over stdio, list its tools (every page), end its process group. Never calls a tool."""
    full_env = {"PATH": os.environ["PATH"], "HOME": str(cwd / ".home"), "LANG": "C.UTF-8",
                "NO_UPDATE_NOTIFIER": "1", "DO_NOT_TRACK": "1", **env}
    (cwd / ".home").mkdir(parents=True, exist_ok=True)
    with open(stderr_path or os.devnull, "wb") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=cwd,
                                env=full_env, start_new_session=True)
        try:
            return _list_all(StdioSession(proc, time.monotonic() + timeout), protocol)
        except (TimeoutError, EOFError, BrokenPipeError) as e:
            return Listing(False, f"{type(e).__name__}: {e}")
        finally:
            _end(proc)


def _end(proc: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(5)
            return
        except subprocess.TimeoutExpired:
            continue


def install(package: str, version: str | None, root: Path) -> Path:
    """Install one package into its own folder; the installed package's folder (with its package.json)."""
    folder = root / package.lstrip("@").replace("/", "__")
    pdir = folder / "node_modules" / package
    if not (pdir / "package.json").exists():
        folder.mkdir(parents=True, exist_ok=True)
        spec = f"{package}@{version}" if version else package
        subprocess.run(["npm", "install", "--prefix", str(folder), spec, "--no-audit", "--no-fund",
                        "--ignore-scripts", "--loglevel=error"], capture_output=True, timeout=900, check=False)
    if not (pdir / "package.json").exists():
        raise FileNotFoundError(f"npm install of {package} left no package.json")
    return pdir


def repository_url(pj: dict[str, Any]) -> str | None:
    """package.json's repository as a plain https URL where it can be."""
    repo = pj.get("repository")
    url = repo.get("url") if isinstance(repo, dict) else repo
    if not isinstance(url, str) or not url:
        return None
    url = re.sub(r"^git\+|\.git$", "", url)
    url = re.sub(r"^(git|ssh)://(git@)?", "https://", url)
    url = re.sub(r"^git@github\.com:|^github:", "https://github.com/", url)
    return "https://github.com/" + url if re.fullmatch(r"[\w.-]+/[\w.-]+", url) else url


def publisher(package: str, pj: dict[str, Any]) -> str:
    """The npm scope; else the GitHub owner from repository, homepage or author; else the author's name."""
    if package.startswith("@"):
        return package.split("/")[0]
    author = pj.get("author")
    if isinstance(author, dict):
        author = f"{author.get('name') or ''} ({author.get('url') or ''})"
    for text in (repository_url(pj) or "", pj.get("homepage") or "", author or ""):
        m = re.search(r"github\.com[/:]([^/)\s]+)", str(text))
        if m:
            return "github:" + m.group(1)
    name = re.sub(r"\s*[<(].*$", "", author or "").strip()
    return "author:" + name if name else "npm:" + package


def _command(spec: dict[str, Any], pdir: Path, pj: dict[str, Any]) -> list[str]:
    if "cmd" in spec:
        return [c.replace("{PDIR}", str(pdir)) for c in spec["cmd"]]
    bins = pj.get("bin")
    if isinstance(bins, dict):
        short = spec["package"].split("/")[-1]
        bins = bins.get(spec.get("bin") or short) or next((v for k, v in bins.items() if "mcp" in k), None) \
            or next(iter(bins.values()), None)
    if not isinstance(bins, str):
        raise FileNotFoundError("no bin in package.json")
    path = pdir / bins
    with open(path, "rb") as f:
        shebang = f.read(2) == b"#!"
    runner = [] if shebang and path.suffix not in (".js", ".mjs", ".cjs") else ["node"]
    return [*runner, str(path), *spec.get("args", [])]


def _server_record(spec: dict[str, Any], pj: dict[str, Any], cmd: list[str], pdir: Path,
                   got: Listing) -> dict[str, Any]:
    package, version = spec["package"], pj["version"]
    shown = " ".join(c.replace(str(pdir), "<pkg>") for c in cmd)
    env_keys = sorted(spec.get("env", {}))
    creds = f" with placeholder values for {', '.join(env_keys)}" if env_keys else " with no credentials in the env"
    keywords = pj.get("keywords") or []
    return {
        "id": f"npm:{package}@{version}", "kind": "npm", "package": package, "version": version,
        "publisher": publisher(package, pj), "registry_name": pj.get("mcpName"), "description": pj.get("description"),
        "keywords": keywords if isinstance(keywords, list) else [keywords], "repository": repository_url(pj),
        "license": pj.get("license") if isinstance(pj.get("license"), str) else None, "homepage": pj.get("homepage"),
        "server_info": got.server_info, "protocol_version": got.protocol_version, "instructions": got.instructions,
        "how": (f"npm install {package}@{version} (--ignore-scripts); started over stdio as `{shown}`{creds}; "
                f"initialize (asked {PROTOCOL}, agreed {got.protocol_version}), notifications/initialized, tools/list "
                f"({got.pages} page{'s' if got.pages != 1 else ''}); no tool called; offline"),
        "tools": [_tool(t) for t in got.tools],
    }


def _tool(t: dict[str, Any]) -> dict[str, Any]:
    """A tool as published: the standard fields (title/annotations None where absent), others under _meta_other."""
    out = {k: t.get(k) for k in TOOL_FIELDS if k != "outputSchema" or k in t}
    extra = {k: v for k, v in t.items() if k not in TOOL_FIELDS}
    if extra:
        out["_meta_other"] = extra
    return out


def gather(specs: list[dict[str, Any]], workdir: Path) -> dict[str, list[dict[str, Any]]]:
    """Install and list every spec's server; {"servers": [...], "skipped": [...]}."""
    servers: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for spec in specs:
        package = spec["package"]
        try:
            pdir = install(package, spec.get("version"), workdir / "pkgs")
            pj = json.loads((pdir / "package.json").read_text())
            cmd = _command(spec, pdir, pj)
        except (OSError, subprocess.TimeoutExpired, ValueError) as e:
            skipped.append({"package": package, "version": spec.get("version"), "why": f"install/start: {e}"})
            continue
        run_dir = workdir / "run" / package.lstrip("@").replace("/", "__")
        run_dir.mkdir(parents=True, exist_ok=True)
        got = list_tools(cmd, spec.get("env", {}), run_dir, timeout=spec.get("timeout", 60.0),
                         stderr_path=run_dir / "stderr.log")
        if got.ok and got.tools:
            servers.append(_server_record(spec, pj, cmd, pdir, got))
        else:
            skipped.append({"package": package, "version": pj["version"], "why": got.error or "listed no tools"})
        print(f"{'OK  ' if got.ok else 'FAIL'} {package}@{pj['version']} {len(got.tools)} tools {got.error or ''}",
              file=sys.stderr)
    return {"servers": servers, "skipped": skipped}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    specs = json.loads(Path(args[0]).read_text())
    result = gather(specs, Path(args[1]))
    Path(args[2]).write_text(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
