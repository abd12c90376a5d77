"""asyncio client for the toolreg sidecar: JSON-RPC 2.0 over the child's stdin/stdout with
LSP-style Content-Length framing. Stdlib only."""
from __future__ import annotations

import asyncio
import collections
import inspect
import json
import os
import signal as _signal
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping, Optional, Sequence, Union, cast, overload

from ._protocol import (
    AppCall,
    ApprovalDecision,
    ApprovalRequest,
    ApprovalRespondParams,
    Assistant,
    GrantsResult,
    Remember,
    RevokeParams,
    RevokeResult,
    CallToolResult,
    CatalogStatusResult,
    CompleteReply,
    DefinitionsParams,
    Definitions,
    DeregisterResult,
    DidChangeParams,
    Empty,
    CreateMessageResult,
    ElicitParams,
    ElicitResult,
    EmbedParams,
    EmbedResult,
    ExecuteToolParams,
    HostCapabilities,
    HostRepairToolCallResult,
    InitializeParams,
    InitializeResult,
    InvokeParams,
    InvokeResult,
    ListResult,
    ListToolsResult,
    LoadedSkill,
    LogMessageParams,
    OpenUrlParams,
    PinsResult,
    RegistryPage,
    Resolved,
    LogSettings,
    Include,
    PlanReply,
    PlanResult,
    Programmatic,
    PromptList,
    ProgressParams,
    Rendering,
    SearchBy,
    SearchSettings,
    RegisterResult,
    RepairToolCallParams,
    RootsParams,
    RootsResult,
    ResolveResult,
    ResourceList,
    ResourceTemplateList,
    ResourceUpdated,
    ResultSettings,
    SampleParams,
    Scope,
    SelectActiveResult,
    ServerChanged,
    ServerConfig,
    ServerStatus,
    SkillList,
    SyncResult,
    Timeouts,
    ToolDefinition,
    ToolEntry,
    UsageListResult,
    UsagePolicy,
    UsageResetResult,
)

from . import __version__
from ._protocol import PROTOCOL_VERSION
from .binary import find_binary, protocol_compatible
from .local_model import find_local_models, notice_lexical

__all__ = ["ToolregClient", "ToolregError", "ToolregRpcError", "ToolregExitedError", "ToolregProtocolVersionError", "ExitInfo"]

MaybeAwaitable = Union[Any, Awaitable[Any]]
ApprovalAnswer = Union[ApprovalDecision, Mapping[str, Any]]

REQUEST_CANCELLED = -32800



class SecretStore:
    """Where the sidecar keeps OAuth tokens for MCP servers (`host/secrets/*`), e.g. the OS
    keychain. Subclass it, or pass any object with these three methods (plain or async).
    Keys look like `toolreg/oauth/<serverId>`; values are opaque text holding tokens: never
    log them. This base class keeps them in memory."""

    def __init__(self) -> None:
        self._values: dict[str, str] = {}

    def get(self, key: str) -> "Optional[str] | Awaitable[Optional[str]]":
        return self._values.get(key)

    def set(self, key: str, value: str) -> "None | Awaitable[None]":
        self._values[key] = value
        return None

    def delete(self, key: str) -> "None | Awaitable[None]":
        self._values.pop(key, None)
        return None

class ToolregError(Exception):
    """Base class of the client's errors."""


class ToolregRpcError(ToolregError):
    """A JSON-RPC error response from the sidecar."""

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{method}: {message} ({code})")
        self.method = method
        self.code = code
        self.rpc_message = message
        self.data = data


class ToolregProtocolVersionError(ToolregError):
    """The sidecar speaks a protocol version this client cannot (see `protocol_compatible`)."""

    def __init__(self, binary: str, sidecar_version: str, client_version: str = PROTOCOL_VERSION) -> None:
        super().__init__(
            f"the toolreg sidecar {binary} speaks protocol {sidecar_version}, this client (toolreg_client {__version__}) "
            f"speaks protocol {client_version}: install matching versions (the toolreg wheel brings its own binary), "
            "or pass binary_path / set TOOLREG_BIN to a matching one"
        )
        self.binary = binary
        self.sidecar_version = sidecar_version
        self.client_version = client_version


class ToolregExitedError(ToolregError):
    """The sidecar ended (or could not start) while a call was pending, or before it was made."""

    def __init__(self, exit_code: Optional[int], signal: Optional[str], stderr: Sequence[str], method: Optional[str] = None) -> None:
        how = f"killed by {signal}" if signal else f"exited with code {exit_code}"
        tail = ("; last stderr lines:\n" + "\n".join(list(stderr)[-10:])) if stderr else ""
        super().__init__(f"toolreg sidecar {how}{f' during {method}' if method else ''}{tail}")
        self.exit_code = exit_code
        self.signal = signal
        self.stderr = list(stderr)
        self.method = method

    @classmethod
    def spawn_failed(cls, binary: str, cause: BaseException) -> "ToolregExitedError":
        """The process could not be started at all (e.g. FileNotFoundError, the `__cause__`)."""
        e = cls(None, None, [], "spawn")
        e.args = (f"could not start the toolreg sidecar {binary}: {cause}",)
        return e


@dataclass(frozen=True)
class ExitInfo:
    code: Optional[int]
    signal: Optional[str]
    stderr: list[str] = field(default_factory=list)
    expected: bool = False
    """Whether the exit followed `close()` (shutdown + exit)."""


async def _maybe_await(v: MaybeAwaitable) -> Any:
    return await v if inspect.isawaitable(v) else v


class ToolregClient:
    """Use `await ToolregClient.spawn(...)`; `await client.close()` (or `async with`)."""

    initialize_result: InitializeResult
    #: The packaged MiniLM's paths when `spawn` found and sent them (`local_model`), else None.
    local_model: Optional[dict[str, str]] = None
    #: Every packaged model `spawn` found and sent (MiniLM, USE-m3), empty when none.
    local_models: list[dict[str, str]]

    def __init__(self, proc: asyncio.subprocess.Process, callbacks: dict[str, Any], stderr_lines: int) -> None:
        self.process = proc
        self.local_models = []
        self._cb = callbacks
        self._loop = asyncio.get_running_loop()
        self._next_id = 0
        self._pending: dict[int, tuple[asyncio.Future[Any], str]] = {}
        self._incoming: dict[Any, asyncio.Task[None]] = {}
        self._stderr: collections.deque[str] = collections.deque(maxlen=stderr_lines)
        self._exit_info: Optional[ExitInfo] = None
        self._exited: asyncio.Future[ExitInfo] = self._loop.create_future()
        self._closing = False
        self._stdout_eof = asyncio.Event()
        # callId -> approval callbacks waiting for the user, and tool/invoke calls in flight
        self._approvals_by_call: dict[str, set[asyncio.Task[Any]]] = {}
        # approvalId -> the approval callback's task, until it answers or is withdrawn
        self._approvals_by_id: dict[str, asyncio.Task[Any]] = {}
        self._moot: set[str] = set()  # approvalIds whose answer nobody waits for any more
        self._invokes_in_flight: dict[str, int] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reader = self._spawn_task(self._read_loop())
        self._stderr_task = self._spawn_task(self._stderr_loop())
        self._watcher = self._spawn_task(self._watch())

    # ---- construction --------------------------------------------------------------------------

    @classmethod
    async def spawn(
        cls,
        binary_path: Optional[str] = None,
        *,
        args: Sequence[str] = ("serve",),
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        client_info: Optional[Mapping[str, str]] = None,
        capabilities: Optional[HostCapabilities] = None,
        cache_dir: Optional[str] = None,
        log: Optional[LogSettings] = None,
        timeouts: Optional[Timeouts] = None,
        search: Optional[SearchSettings] = None,
        results: Optional[ResultSettings] = None,
        local_model: bool = True,
        on_approval_request: Optional[Callable[[ApprovalRequest], MaybeAwaitable]] = None,
        on_execute_tool: Optional[Callable[[ExecuteToolParams], Union[CallToolResult, Awaitable[CallToolResult]]]] = None,
        on_repair_tool_call: Optional[Callable[[RepairToolCallParams], Union[HostRepairToolCallResult, Awaitable[HostRepairToolCallResult]]]] = None,
        on_elicit: Optional[Callable[[ElicitParams], Union[ElicitResult, Awaitable[ElicitResult]]]] = None,
        on_sample: Optional[Callable[[SampleParams], Union[CreateMessageResult, Awaitable[CreateMessageResult]]]] = None,
        on_roots: Optional[Callable[[RootsParams], Union[RootsResult, Awaitable[RootsResult]]]] = None,
        on_embed: Optional[Callable[[EmbedParams], Union[EmbedResult, Awaitable[EmbedResult]]]] = None,
        on_catalog_did_change: Optional[Callable[[DidChangeParams], MaybeAwaitable]] = None,
        on_resources_changed: Optional[Callable[[ServerChanged], MaybeAwaitable]] = None,
        on_prompts_changed: Optional[Callable[[ServerChanged], MaybeAwaitable]] = None,
        on_resource_updated: Optional[Callable[[ResourceUpdated], MaybeAwaitable]] = None,
        on_progress: Optional[Callable[[ProgressParams], MaybeAwaitable]] = None,
        on_log_message: Optional[Callable[[LogMessageParams], MaybeAwaitable]] = None,
        on_exit: Optional[Callable[[ExitInfo], MaybeAwaitable]] = None,
        on_stderr: Optional[Callable[[str], Any]] = None,
        on_error: Optional[Callable[[BaseException], Any]] = None,
        on_request: Optional[Callable[[str, Any], MaybeAwaitable]] = None,
        on_open_url: Optional[Callable[[OpenUrlParams], MaybeAwaitable]] = None,
        secrets: Optional[SecretStore] = None,
        stderr_lines: int = 50,
    ) -> "ToolregClient":
        """Spawns the sidecar (default binary: env TOOLREG_BIN, else the one the `toolreg` wheel put
        in this Python's scripts directory, else `toolreg` on PATH; see `find_binary`) and runs
        `initialize` + `initialized`. Capabilities `approval` / `hostTools` / `repair` /
        `elicitation` / `sampling` / `roots` are declared for the callbacks given (and can be overridden
        with `capabilities`).

        `on_elicit` answers an MCP server's question during a tool call (`host/elicit`) with
        `{"action": "accept", "content": {...}}` (form mode; fields left out get the schema's
        defaults), `{"action": "accept"}` (URL mode: the user agreed to open the URL),
        `{"action": "decline"}` or `{"action": "cancel"}`. `on_sample` answers an MCP
        `sampling/createMessage` (`host/sample`; `params["request"]` as the server sent it) with an
        MCP `CreateMessageResult`. `on_roots` answers an MCP server's `roots/list` (`host/roots`)
        with `{"roots": [{"uri": "file:///...", "name": ...}]}`: the directories it may work in.
        `on_embed` answers `host/embed` for `tool_search`'s semantic
        signal with `{"vectors": [[...], ...], "model": name}` (one vector per text, in order) from
        the host's embedding model; giving it sends `search={"embeddings": {"kind": "host"}}`
        unless `search` names its own source. With neither, and `local_model` left True, the
        local models that `pip install toolreg[semantic]` (MiniLM) and `toolreg[multilingual]`
        (USE-m3) install are found (see `toolreg_client.local_model`) and sent, as
        `{"kind": "onnx", ...paths}`, `{"kind": "use", ...}`, or both as a list; without either the
        search stays lexical and the `toolreg_client` logger warns once per process.
        `local_model=False` keeps the search lexical. A coroutine callback is cancelled when the sidecar withdraws the
        question (timeout, cancelled call); an exception is an error for the server.

        A coroutine `on_approval_request` is cancelled when its answer becomes moot: the sidecar
        sent `approval/withdrawn` for its approvalId (timed out, or the call was cancelled), or the
        `tool_invoke` with the same callId made through this client has settled. No
        `approval/respond` is sent for it then. It answers `"approve"`, `"deny"` or a mapping
        `{"decision", "reason"?, "remember"?}`: `remember` `"session"` or `"always"` keeps an
        approval (`approval_grants`, `approval_revoke`).

        `on_request(method, params)` answers any reverse request that no dedicated callback
        answers (its return value is the result; an exception becomes a -32603 error).

        MCP authorization (OAuth): `on_open_url({url, serverId, reason})` shows the user an
        authorization page (e.g. `webbrowser.open`) and returns once it is shown; `secrets` keeps
        the tokens (`host/secrets/*`). They declare the `openUrl` and `secrets` capabilities;
        without `secrets` the sidecar keeps tokens in memory only.

        MCP resources and prompts: `on_resources_changed({serverId})` and
        `on_prompts_changed({serverId})` say a server's list changed (list again);
        `on_resource_updated({serverId, uri})` a resource subscribed with
        `catalog_subscribe_resource` changed (read it again). A host that renders MCP Apps views
        passes `capabilities={"apps": {"mimeTypes": ["text/html;profile=mcp-app"]}}`."""
        binary = find_binary(binary_path)
        try:
            proc = await asyncio.create_subprocess_exec(
                binary,
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=dict(env) if env is not None else None,
                cwd=cwd,
            )
        except OSError as e:
            raise ToolregExitedError.spawn_failed(binary, e) from e
        callbacks = dict(
            approval=on_approval_request,
            execute=on_execute_tool,
            repair=on_repair_tool_call,
            elicit=on_elicit,
            sample=on_sample,
            roots=on_roots,
            embed=on_embed,
            catalog=on_catalog_did_change,
            resources_changed=on_resources_changed,
            prompts_changed=on_prompts_changed,
            resource_updated=on_resource_updated,
            progress=on_progress,
            log=on_log_message,
            exit=on_exit,
            stderr=on_stderr,
            error=on_error,
            request=on_request,
            open_url=on_open_url,
            secrets=secrets,
        )
        client = cls(proc, callbacks, stderr_lines)
        caps: HostCapabilities = {
            "approval": on_approval_request is not None,
            "hostTools": on_execute_tool is not None,
            "repair": on_repair_tool_call is not None,
            "elicitation": on_elicit is not None,
            "sampling": on_sample is not None,
            "roots": on_roots is not None,
            "openUrl": on_open_url is not None,
            "secrets": secrets is not None,
        }
        caps.update(capabilities or {})
        params: InitializeParams = {
            "clientInfo": cast(Any, dict(client_info) if client_info else {"name": "toolreg-client-py", "version": __version__}),
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": caps,
        }
        if cache_dir is not None:
            params["cacheDir"] = cache_dir
        if log is not None:
            params["log"] = log
        if timeouts is not None:
            params["timeouts"] = timeouts
        if results is not None:
            params["results"] = results
        settings: SearchSettings = dict(search) if search is not None else {}  # type: ignore[assignment]
        if on_embed is not None and not settings.get("embeddings"):
            settings["embeddings"] = {"kind": "host"}
        if local_model and not settings.get("embeddings"):
            found = find_local_models(env)
            if found:
                settings["embeddings"] = cast(Any, found[0] if len(found) == 1 else found)
                client.local_models = found
                client.local_model = next((m for m in found if m["kind"] == "onnx"), None)
            else:
                notice_lexical()
        if settings or search is not None:
            params["search"] = settings
        try:
            client.initialize_result = await client.request("initialize", params)
            spoken = str(client.initialize_result.get("protocolVersion"))
            if not protocol_compatible(PROTOCOL_VERSION, spoken):
                raise ToolregProtocolVersionError(binary, spoken)
            await client.notify("initialized", {})
        except BaseException:
            client.kill(_signal.SIGKILL)
            await asyncio.shield(client._exited)
            raise
        return client

    async def __aenter__(self) -> "ToolregClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    # ---- plumbing ------------------------------------------------------------------------------

    def _spawn_task(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _report(self, e: BaseException) -> None:
        cb = self._cb.get("error")
        if cb is not None:
            try:
                cb(e)
            except Exception:
                pass

    def _write_nowait(self, msg: Mapping[str, Any]) -> None:
        body = json.dumps(msg, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
        self._write_bytes(body)

    def _write_bytes(self, body: bytes) -> None:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            return
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _drain(self) -> None:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            return
        try:
            await stdin.drain()
        except (ConnectionError, BrokenPipeError, RuntimeError):
            pass  # the process is gone; its exit rejects the pending calls

    async def _read_loop(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                header = await stdout.readuntil(b"\r\n\r\n")
                length = None
                for line in header.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length is None:
                    self._report(ToolregError(f"frame without Content-Length: {header!r}"))
                    continue
                body = await stdout.readexactly(length)
                try:
                    msg = json.loads(body)
                except ValueError as e:
                    self._report(ToolregError(f"sidecar sent a body that is not JSON: {e}"))
                    continue
                self._dispatch(msg)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except asyncio.LimitOverrunError as e:
            self._report(ToolregError(f"frame header too long: {e}"))
        self._stdout_eof.set()
        # stdout is closed: the sidecar can answer nothing more. Make sure it ends, so that the
        # exit handler rejects what is pending.
        try:
            await asyncio.wait_for(asyncio.shield(self._exited), 2.0)
        except asyncio.TimeoutError:
            self.kill(_signal.SIGKILL)

    def _dispatch(self, msg: Any) -> None:
        if not isinstance(msg, dict):
            self._report(ToolregError(f"unexpected message: {msg!r}"))
            return
        method = msg.get("method")
        if method is None:
            entry = self._pending.get(msg.get("id"))  # type: ignore[arg-type]
            if entry is None:
                return  # e.g. the -32800 answer to a call the host already gave up on
            fut, m = entry
            if fut.done():
                return
            err = msg.get("error")
            if err is not None:
                fut.set_exception(ToolregRpcError(m, int(err.get("code", 0)), str(err.get("message", "")), err.get("data")))
            else:
                fut.set_result(msg.get("result"))
        elif "id" in msg:
            rid = msg["id"]
            self._incoming[rid] = self._spawn_task(self._answer(rid, method, msg.get("params")))
        else:
            self._notification(method, msg.get("params"))

    def _notification(self, method: str, params: Any) -> None:
        if method == "approval/request":
            task = self._spawn_task(self._approval(params))
            # Registered now, not when the task first runs: an approval/withdrawn already in the
            # read buffer is dispatched before that.
            call_id, approval_id = (params or {}).get("callId"), (params or {}).get("approvalId")
            if isinstance(call_id, str):
                self._approvals_by_call.setdefault(call_id, set()).add(task)
            if isinstance(approval_id, str):
                self._approvals_by_id[approval_id] = task
            task.add_done_callback(lambda t: self._approval_done(t, call_id, approval_id))
            return
        if method == "approval/withdrawn":
            withdrawn_id = (params or {}).get("approvalId")
            waiting = self._approvals_by_id.pop(withdrawn_id, None) if isinstance(withdrawn_id, str) else None
            if waiting is not None:
                # Only a request still waiting for its callback: one that answered is left alone.
                self._moot.add(cast(str, withdrawn_id))
                waiting.cancel(f"approval/withdrawn: {(params or {}).get('reason')}")
            return
        if method == "$/cancelRequest":
            incoming = self._incoming.get((params or {}).get("id"))
            if incoming is not None:
                incoming.cancel()
            return
        key = {
            "catalog/didChange": "catalog",
            "catalog/resourcesChanged": "resources_changed",
            "catalog/promptsChanged": "prompts_changed",
            "catalog/resourceUpdated": "resource_updated",
            "$/progress": "progress",
            "window/logMessage": "log",
        }.get(method)
        cb = self._cb.get(key) if key else None
        if cb is None:
            return
        try:
            r = cb(params)
            if inspect.isawaitable(r):
                self._spawn_task(self._guard(r))
        except Exception as e:
            self._report(e)

    async def _guard(self, aw: Awaitable[Any]) -> None:
        try:
            await aw
        except Exception as e:
            self._report(e)

    def _auth_callback(self, method: str) -> Optional[Callable[[Any], Any]]:
        """`host/openUrl` and `host/secrets/*` through `on_open_url` and `secrets`."""
        if method == "host/openUrl" and self._cb.get("open_url") is not None:
            open_url = self._cb["open_url"]

            async def opened(p: Any) -> Any:
                await _maybe_await(open_url(p))
                return {}

            return opened
        store = self._cb.get("secrets")
        if store is None or not method.startswith("host/secrets/"):
            return None

        async def secret(p: Any) -> Any:
            if method == "host/secrets/get":
                return {"value": await _maybe_await(store.get(p["key"]))}
            if method == "host/secrets/set":
                await _maybe_await(store.set(p["key"], p["value"]))
                return {}
            if method == "host/secrets/delete":
                await _maybe_await(store.delete(p["key"]))
                return {}
            raise LookupError(f"no such secrets method {method}")

        return secret

    async def _answer(self, rid: Any, method: str, params: Any) -> None:
        cb = {
            "host/executeTool": self._cb.get("execute"),
            "host/repairToolCall": self._cb.get("repair"),
            "host/elicit": self._cb.get("elicit"),
            "host/sample": self._cb.get("sample"),
            "host/roots": self._cb.get("roots"),
            "host/embed": self._cb.get("embed"),
        }.get(method)
        if cb is None:
            cb = self._auth_callback(method)
        fallback = self._cb.get("request")
        if cb is None and fallback is not None:
            cb = lambda p: fallback(method, p)  # noqa: E731
        try:
            if cb is None:
                reply: dict[str, Any] = {"error": {"code": -32601, "message": f"the host does not answer {method}", "data": {"method": method}}}
            else:
                try:
                    reply = {"result": await _maybe_await(cb(params))}
                except asyncio.CancelledError:
                    reply = {"error": {"code": REQUEST_CANCELLED, "message": "request cancelled"}}
                except Exception as e:
                    reply = {"error": {"code": -32603, "message": f"{type(e).__name__}: {e}"}}
            try:
                self._write_nowait({"jsonrpc": "2.0", "id": rid, **reply})
            except (TypeError, ValueError) as e:
                self._write_nowait({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": f"result is not JSON: {e}"}})
            await self._drain()
        finally:
            self._incoming.pop(rid, None)

    def _approval_done(self, task: asyncio.Task[Any], call_id: Any, approval_id: Any) -> None:
        # Also covers a task cancelled before it ever ran (its own cleanup never ran then).
        if isinstance(approval_id, str):
            if self._approvals_by_id.get(approval_id) is task:
                del self._approvals_by_id[approval_id]
            self._moot.discard(approval_id)
        waiting = self._approvals_by_call.get(call_id) if isinstance(call_id, str) else None
        if waiting is not None:
            waiting.discard(task)
            if not waiting:
                del self._approvals_by_call[call_id]

    async def _approval(self, req: ApprovalRequest) -> None:
        decision: str = "deny"
        reason: Optional[str] = None
        remember: Optional[str] = None
        cb = self._cb.get("approval")
        call_id = req.get("callId")
        me = asyncio.current_task()
        approval_id = req.get("approvalId")
        try:
            if cb is None:
                reason = "the host has no approval handler"
            else:
                answer = await _maybe_await(cb(req))
                if isinstance(answer, str):
                    decision = answer
                else:
                    decision = answer.get("decision", "deny")
                    reason = answer.get("reason")
                    remember = answer.get("remember")
        except asyncio.CancelledError:
            # The sidecar withdrew the request (approval/withdrawn), or the tool/invoke with this
            # callId settled: nobody waits for the answer any more.
            return
        except Exception as e:
            reason = f"approval handler failed: {type(e).__name__}: {e}"
        finally:
            if isinstance(approval_id, str) and self._approvals_by_id.get(approval_id) is me:
                del self._approvals_by_id[approval_id]
            if isinstance(call_id, str) and me is not None:
                waiting = self._approvals_by_call.get(call_id)
                if waiting is not None:
                    waiting.discard(me)
                    if not waiting:
                        del self._approvals_by_call[call_id]
        if isinstance(approval_id, str) and approval_id in self._moot:
            # The callback swallowed the cancellation of a moot request: still send nothing.
            return
        if decision not in ("approve", "deny"):
            reason, decision = f"approval handler answered {decision!r}", "deny"
        params: ApprovalRespondParams = {"approvalId": req["approvalId"], "decision": cast(ApprovalDecision, decision)}
        if reason is not None:
            params["reason"] = reason
        if remember is not None and decision == "approve":
            params["remember"] = cast(Remember, remember)
        try:
            await self.approval_respond(params)
        except Exception as e:
            self._report(e)

    async def _stderr_loop(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        cb = self._cb.get("stderr")
        while True:
            try:
                line = await stderr.readline()
            except (ValueError, asyncio.LimitOverrunError):
                continue
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            self._stderr.append(text)
            if cb is not None:
                try:
                    cb(text)
                except Exception as e:
                    self._report(e)

    async def _watch(self) -> None:
        rc = await self.process.wait()
        # Let stdout and stderr drain, but not forever (a grandchild may hold the pipes).
        eof = asyncio.ensure_future(self._stdout_eof.wait())
        await asyncio.wait([eof, self._stderr_task], timeout=0.5)
        eof.cancel()
        code, sig = (rc, None) if rc >= 0 else (None, _signal_name(-rc))
        info = ExitInfo(code=code, signal=sig, stderr=list(self._stderr), expected=self._closing)
        self._exit_info = info
        for rid, (fut, method) in list(self._pending.items()):
            if not fut.done():
                fut.set_exception(ToolregExitedError(code, sig, info.stderr, method))
        for t in list(self._incoming.values()):
            t.cancel()
        if not self._exited.done():
            self._exited.set_result(info)
        cb = self._cb.get("exit")
        if cb is not None:
            try:
                await _maybe_await(cb(info))
            except Exception as e:
                self._report(e)

    # ---- public API ----------------------------------------------------------------------------

    @property
    def is_exited(self) -> bool:
        return self._exit_info is not None

    @property
    def exit_info(self) -> Optional[ExitInfo]:
        return self._exit_info

    async def wait_for_exit(self) -> ExitInfo:
        return await asyncio.shield(self._exited)

    async def request(self, method: str, params: Optional[Mapping[str, Any]] = None) -> Any:
        """Sends any request. Cancelling the awaiting task sends `$/cancelRequest`."""
        if self._exit_info is not None:
            raise ToolregExitedError(self._exit_info.code, self._exit_info.signal, self._exit_info.stderr, method)
        if params is not None and not isinstance(params, Mapping):
            raise TypeError(f"{method}: params must be a mapping (by name), got {type(params).__name__}")
        self._next_id += 1
        rid = self._next_id
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        try:
            body = json.dumps(msg, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
        except (TypeError, ValueError) as e:
            raise TypeError(f"{method}: params are not JSON: {e}") from e
        call_id = params.get("callId") if method == "tool/invoke" and params is not None else None
        if isinstance(call_id, str):
            self._invokes_in_flight[call_id] = self._invokes_in_flight.get(call_id, 0) + 1
        fut: asyncio.Future[Any] = self._loop.create_future()
        self._pending[rid] = (fut, method)
        try:
            self._write_bytes(body)
            await self._drain()
            return await fut
        except asyncio.CancelledError:
            # Awaiting `fut` from a cancelled task cancels `fut` itself: only a real answer means done.
            if (not fut.done() or fut.cancelled()) and self._exit_info is None:
                try:
                    self._write_nowait({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": rid}})
                except Exception:
                    pass
            raise
        finally:
            self._pending.pop(rid, None)
            if isinstance(call_id, str):
                self._invoke_settled(call_id)

    def _invoke_settled(self, call_id: str) -> None:
        left = self._invokes_in_flight.get(call_id, 1) - 1
        if left > 0:
            self._invokes_in_flight[call_id] = left
            return
        self._invokes_in_flight.pop(call_id, None)
        for task in self._approvals_by_call.pop(call_id, set()):
            approval_id = next((a for a, t in self._approvals_by_id.items() if t is task), None)
            if approval_id is not None:
                del self._approvals_by_id[approval_id]
                self._moot.add(approval_id)
            task.cancel()

    async def notify(self, method: str, params: Optional[Mapping[str, Any]] = None) -> None:
        if self._exit_info is not None:
            raise ToolregExitedError(self._exit_info.code, self._exit_info.signal, self._exit_info.stderr, method)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._write_nowait(msg)
        await self._drain()

    async def shutdown(self) -> None:
        await self.request("shutdown")

    async def close(self, timeout: float = 5.0) -> ExitInfo:
        """`shutdown` + `exit`, then waits for the process (SIGKILL after `timeout` seconds)."""
        if self._exit_info is not None:
            return self._exit_info
        self._closing = True
        try:
            await asyncio.wait_for(self.shutdown(), timeout)
            await self.notify("exit")
            if self.process.stdin is not None:
                self.process.stdin.close()
        except (ToolregError, asyncio.TimeoutError, OSError):
            pass
        try:
            return await asyncio.wait_for(asyncio.shield(self._exited), timeout)
        except asyncio.TimeoutError:
            self.kill(_signal.SIGKILL)
            return await asyncio.shield(self._exited)

    def kill(self, sig: int = _signal.SIGTERM) -> None:
        """Signals the process without the shutdown handshake."""
        if self._exit_info is None and self.process.returncode is None:
            try:
                self.process.send_signal(sig)
            except ProcessLookupError:
                pass

    # registry
    async def registry_register(self, entries: Sequence[ToolEntry]) -> RegisterResult:
        return cast(RegisterResult, await self.request("registry/register", {"entries": list(entries)}))

    async def registry_deregister(self, names: Sequence[str]) -> DeregisterResult:
        return cast(DeregisterResult, await self.request("registry/deregister", {"names": list(names)}))

    async def registry_list(self, namespace: Optional[str] = None, query: Optional[str] = None) -> ListResult:
        params: dict[str, Any] = {}
        if namespace is not None:
            params["namespace"] = namespace
        if query is not None:
            params["query"] = query
        return cast(ListResult, await self.request("registry/list", params))

    async def registry_select_active(self, scope: Optional[Scope] = None) -> SelectActiveResult:
        return cast(SelectActiveResult, await self.request("registry/selectActive", {"scope": scope or {}}))

    async def registry_resolve_mcp_tool_ids(self, assistant: Optional[Assistant] = None) -> ResolveResult:
        return cast(ResolveResult, await self.request("registry/resolveMcpToolIds", {"assistant": assistant or {}}))

    async def registry_sync_mcp(self, selected_tool_ids: Optional[Sequence[str]] = None) -> SyncResult:
        params: dict[str, Any] = {} if selected_tool_ids is None else {"selectedToolIds": list(selected_tool_ids)}
        return cast(SyncResult, await self.request("registry/syncMcp", params))

    # exposition and tools
    @overload
    async def exposition_plan(
        self,
        scope: Optional[Scope] = None,
        *,
        context_window: Optional[int] = None,
        model: Optional[str] = None,
        client_tools: Optional[Sequence[ToolDefinition]] = None,
        render: Optional[Rendering] = None,
        search: Optional[SearchBy] = None,
        include: Optional[Sequence[Include]] = None,
        if_none_match: None = None,
        usage: Optional[UsagePolicy] = None,
        session: Optional[str] = None,
        usage_key: Optional[str] = None,
        code_mode: Optional[str] = None,
        programmatic: Optional[Programmatic] = None,
        strict: Optional[bool] = None,
    ) -> PlanResult: ...

    @overload
    async def exposition_plan(
        self,
        scope: Optional[Scope] = None,
        *,
        context_window: Optional[int] = None,
        model: Optional[str] = None,
        client_tools: Optional[Sequence[ToolDefinition]] = None,
        render: Optional[Rendering] = None,
        search: Optional[SearchBy] = None,
        include: Optional[Sequence[Include]] = None,
        if_none_match: str,
        usage: Optional[UsagePolicy] = None,
        session: Optional[str] = None,
        usage_key: Optional[str] = None,
        code_mode: Optional[str] = None,
        programmatic: Optional[Programmatic] = None,
        strict: Optional[bool] = None,
    ) -> PlanReply: ...

    async def exposition_plan(
        self,
        scope: Optional[Scope] = None,
        *,
        context_window: Optional[int] = None,
        model: Optional[str] = None,
        client_tools: Optional[Sequence[ToolDefinition]] = None,
        render: Optional[Rendering] = None,
        search: Optional[SearchBy] = None,
        include: Optional[Sequence[Include]] = None,
        if_none_match: Optional[str] = None,
        usage: Optional[UsagePolicy] = None,
        session: Optional[str] = None,
        usage_key: Optional[str] = None,
        code_mode: Optional[str] = None,
        programmatic: Optional[Programmatic] = None,
        strict: Optional[bool] = None,
    ) -> PlanReply:
        """The plan for one model request. ``render`` ("portable", "anthropic", "openai",
        "gemini") picks
        the provider shape of ``plan["request"]`` (see ``toolreg_client.native``); ``include``
        asks for the parts that grow with the pool ("perTool", "deferred"); ``usage`` places the
        most used deferred tools inline, fixed per ``session`` (counted under ``usage_key``);
        ``code_mode="sandbox"`` also offers ``tool_exec``; ``programmatic`` (``{}`` for the
        defaults; native renderings only) marks the tools no approval gates for the provider's
        own code execution and adds its tool. ``strict=True`` (render "openai") sends every
        function that has a strict form ``strict: true`` in it. With
        ``if_none_match`` (a ``planHash`` held) the answer may be ``{planId, planHash, unchanged}``."""
        params: dict[str, Any] = {"scope": scope or {}}
        if context_window is not None:
            params["contextWindow"] = context_window
        if model is not None:
            params["model"] = model
        if client_tools is not None:
            params["clientTools"] = list(client_tools)
        if render is not None:
            params["render"] = render
        if search is not None:
            params["search"] = search
        if include is not None:
            params["include"] = list(include)
        if if_none_match is not None:
            params["ifNoneMatch"] = if_none_match
        if usage is not None:
            params["usage"] = dict(usage)
        if session is not None:
            params["session"] = session
        if usage_key is not None:
            params["usageKey"] = usage_key
        if code_mode is not None:
            params["codeMode"] = code_mode
        if programmatic is not None:
            params["programmatic"] = dict(programmatic)
        if strict is not None:
            params["strict"] = strict
        return cast(PlanReply, await self.request("exposition/plan", params))

    async def tool_invoke(
        self,
        name: str,
        arguments: Any = None,
        *,
        call_id: Optional[str] = None,
        plan_id: Optional[str] = None,
        app: Optional[AppCall] = None,
    ) -> InvokeResult:
        """Runs a tool. A call from an MCP Apps view passes `app={"serverId": id}` (the server
        whose view asks): it reaches only that server's tools whose visibility has "app"; anything
        else is an `isError` refusal. A result of a tool with a view carries `ui`."""
        params: InvokeParams = {"name": name, "arguments": arguments}
        if call_id is not None:
            params["callId"] = call_id
        if plan_id is not None:
            params["planId"] = plan_id
        if app is not None:
            params["app"] = app
        return cast(InvokeResult, await self.request("tool/invoke", params))

    async def approval_respond(self, params: ApprovalRespondParams) -> Empty:
        return cast(Empty, await self.request("approval/respond", params))

    async def exposition_definitions(
        self, plan_id: str, names: Optional[Sequence[str]] = None, *, schemas: bool = True
    ) -> Definitions:
        """A plan's deferred definitions (all, or `names`), for a host whose own loop defers tools
        and loads what a search finds; `schemas=False` gives names and descriptions only."""
        params: DefinitionsParams = {"planId": plan_id}
        if names is not None:
            params["names"] = list(names)
        if not schemas:
            params["schemas"] = False
        return cast(Definitions, await self.request("exposition/definitions", params))

    async def approval_grants(self) -> GrantsResult:
        """The approvals the user asked to remember: this run's session grants, then the lasting ones."""
        return cast(GrantsResult, await self.request("approval/grants", {}))

    async def approval_revoke(self, tool: Optional[str] = None, all: bool = False) -> RevokeResult:
        """Revokes the remembered approvals of `tool` (every session's and the lasting one), or all."""
        params: RevokeParams = {"all": True} if all else {}
        if tool is not None:
            params["tool"] = tool
        return cast(RevokeResult, await self.request("approval/revoke", params))

    # MCP catalog
    async def catalog_set_servers(self, servers: Sequence[ServerConfig]) -> Empty:
        return cast(Empty, await self.request("catalog/setServers", {"servers": list(servers)}))

    async def catalog_list_tools(self, server_id: str, include_disabled: Optional[bool] = None) -> ListToolsResult:
        params: dict[str, Any] = {"serverId": server_id}
        if include_disabled is not None:
            params["includeDisabled"] = include_disabled
        return cast(ListToolsResult, await self.request("catalog/listTools", params))

    async def catalog_refresh(self, server_id: str) -> ServerStatus:
        return cast(ServerStatus, await self.request("catalog/refresh", {"serverId": server_id}))

    async def catalog_restart(self, server_id: str) -> ServerStatus:
        return cast(ServerStatus, await self.request("catalog/restart", {"serverId": server_id}))

    async def catalog_status(self) -> CatalogStatusResult:
        return cast(CatalogStatusResult, await self.request("catalog/status"))

    async def catalog_pins(self, server_id: str) -> PinsResult:
        """Every tool of the server's current list with its pin: approved, changed (with a diff) or new."""
        return cast(PinsResult, await self.request("catalog/pins", {"serverId": server_id}))

    async def catalog_approve_tools(
        self, server_id: str, tools: Sequence[str], fingerprints: Optional[Mapping[str, str]] = None
    ) -> PinsResult:
        """Make the current definitions of `tools` (names as the server calls them) the approved ones.

        `fingerprints`: for each tool the user reviewed, the fingerprint `catalog_pins` showed;
        if a definition changed since, nothing is approved (an error, -32602)."""
        params: dict[str, Any] = {"serverId": server_id, "tools": list(tools)}
        if fingerprints:
            params["fingerprints"] = dict(fingerprints)
        return cast(PinsResult, await self.request("catalog/approveTools", params))

    async def catalog_search_registry(self, query: str, limit: Optional[int] = None, cursor: Optional[str] = None) -> RegistryPage:
        """A page of the MCP registry's servers (`initialize`'s `mcpRegistry`) matching `query`."""
        params: dict[str, Any] = {"query": query}
        if limit is not None:
            params["limit"] = limit
        if cursor is not None:
            params["cursor"] = cursor
        return cast(RegistryPage, await self.request("catalog/searchRegistry", params))

    async def catalog_resolve_registry_server(self, name: str, version: Optional[str] = None, package: Optional[int] = None) -> Resolved:
        """A registry server resolved to a quarantined, pinned server config and the inputs the
        user fills (each stands as `{name}` in it) before `catalog_set_servers`."""
        params: dict[str, Any] = {"name": name}
        if version is not None:
            params["version"] = version
        if package is not None:
            params["package"] = package
        return cast(Resolved, await self.request("catalog/resolveRegistryServer", params))

    # MCP resources, prompts, completions
    async def catalog_list_resources(self, server_id: Optional[str] = None, cursor: Optional[str] = None) -> ResourceList:
        """One server's resources, or every enabled server's that offers them, from the cache
        (never waits on a server; `pending` names servers whose list is not known yet)."""
        return cast(ResourceList, await self.request("catalog/listResources", _extras_params(server_id, cursor)))

    async def catalog_list_resource_templates(self, server_id: Optional[str] = None, cursor: Optional[str] = None) -> ResourceTemplateList:
        return cast(ResourceTemplateList, await self.request("catalog/listResourceTemplates", _extras_params(server_id, cursor)))

    async def catalog_read_resource(self, server_id: str, uri: str) -> Any:
        """The MCP `ReadResourceResult` (`contents`); MCP Apps views are read this way."""
        return await self.request("catalog/readResource", {"serverId": server_id, "uri": uri})

    async def catalog_subscribe_resource(self, server_id: str, uri: str) -> Empty:
        """Changes then arrive as `catalog/resourceUpdated` (`on_resource_updated`)."""
        return cast(Empty, await self.request("catalog/subscribeResource", {"serverId": server_id, "uri": uri}))

    async def catalog_unsubscribe_resource(self, server_id: str, uri: str) -> Empty:
        return cast(Empty, await self.request("catalog/unsubscribeResource", {"serverId": server_id, "uri": uri}))

    async def catalog_list_prompts(self, server_id: Optional[str] = None, cursor: Optional[str] = None) -> PromptList:
        return cast(PromptList, await self.request("catalog/listPrompts", _extras_params(server_id, cursor)))

    async def catalog_get_prompt(self, server_id: str, name: str, arguments: Optional[Mapping[str, str]] = None) -> Any:
        """The MCP `GetPromptResult` (`messages`)."""
        params: dict[str, Any] = {"serverId": server_id, "name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return await self.request("catalog/getPrompt", params)

    async def catalog_complete(self, server_id: str, ref: Mapping[str, Any], argument: Mapping[str, Any], context: Optional[Mapping[str, Any]] = None) -> CompleteReply:
        """MCP `completion/complete`: `ref` is `{"type": "ref/prompt", "name"}` or
        `{"type": "ref/resource", "uri"}`, `argument` `{"name", "value"}`, `context`
        `{"arguments": {...}}` (the ones already given)."""
        params: dict[str, Any] = {"serverId": server_id, "ref": dict(ref), "argument": dict(argument)}
        if context is not None:
            params["context"] = dict(context)
        return cast(CompleteReply, await self.request("catalog/complete", params))

    async def catalog_list_skills(self, server_id: str) -> SkillList:
        """The server's skills (SEP-2640) as its `skills/list` gave them; reads no skill file."""
        return cast(SkillList, await self.request("catalog/listSkills", {"serverId": server_id}))

    async def catalog_load_skill(self, server_id: str, uri: str) -> LoadedSkill:
        """A skill's files (`uri`: its SKILL.md), each verified against the listing before the
        next is read; a mismatch is an error and nothing is returned."""
        return cast(LoadedSkill, await self.request("catalog/loadSkill", {"serverId": server_id, "uri": uri}))

    async def usage_list(self, usage_key: Optional[str] = None) -> UsageListResult:
        """Each tool's usage (decayed count, last used, calls in the window) for one usage key, or every key."""
        params: dict[str, Any] = {} if usage_key is None else {"usageKey": usage_key}
        return cast(UsageListResult, await self.request("usage/list", params))

    async def usage_reset(self, usage_key: Optional[str] = None) -> UsageResetResult:
        """Forget the usage counted under one usage key, or under every key."""
        params: dict[str, Any] = {} if usage_key is None else {"usageKey": usage_key}
        return cast(UsageResetResult, await self.request("usage/reset", params))


def _extras_params(server_id: Optional[str], cursor: Optional[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if server_id is not None:
        params["serverId"] = server_id
    if cursor is not None:
        params["cursor"] = cursor
    return params


def _signal_name(num: int) -> str:
    try:
        return _signal.Signals(num).name
    except ValueError:
        return f"signal {num}"

