// toolreg-client: spawn the toolreg sidecar and talk JSON-RPC 2.0 to it over stdio.
import { spawn as spawnProcess, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import {
  CancellationTokenSource,
  ParameterStructures,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
  type CancellationToken,
  type Message,
  type MessageConnection,
  type MessageWriter,
} from 'vscode-jsonrpc/node.js';
import type {
  HostCapabilities,
  HostNotifications,
  HostRequests,
  InitializeParams,
  InitializeResult,
  LogMessageParams,
  LogSettings,
  ProgressParams,
  SearchSettings,
  SidecarNotifications,
  SidecarRequests,
} from './generated/protocol.js';
import type { ApprovalDecision, PlanReply, PlanResult, ResultSettings, Timeouts } from './generated/protocol.js';
import type { PendingHostRequests, PendingSidecarNotifications, PendingSidecarRequests } from './pending.js';
import { PROTOCOL_VERSION } from './generated/protocol.js';
import { protocolCompatible, resolveBinary } from './binary.js';
import { findLocalModels, noticeLexical, type LocalModel, type LocalUseModel } from './local-model.js';
import { createRequire } from 'node:module';

export * from './generated/protocol.js';
export * from './pending.js';
export { PLATFORM_PACKAGES, platformBinary, platformPackageSuffix, protocolCompatible, resolveBinary } from './binary.js';
export {
  EMBEDDING_DIR_ENV,
  LEXICAL_NOTICE,
  MODEL_PACKAGE,
  USE_MODEL_PACKAGE,
  findLocalModel,
  findLocalModels,
  findLocalUseModel,
  type LocalModel,
  type LocalUseModel,
} from './local-model.js';

/** This package's version (package.json; the crate's version, stamped by scripts/version.py). */
export const CLIENT_VERSION: string = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
export * from './native.js';

type Merge<Pending, Generated> = Omit<Pending, keyof Generated> & Generated;
/** Every host-to-sidecar request: generated from the schemas, else the SPEC 8 stand-in types. */
export type AllHostRequests = Merge<PendingHostRequests, HostRequests>;
export type AllSidecarRequests = Merge<PendingSidecarRequests, SidecarRequests>;
export type AllSidecarNotifications = Merge<PendingSidecarNotifications, SidecarNotifications>;
export type RequestMethod = keyof AllHostRequests & string;
export type ParamsOf<M extends RequestMethod> = AllHostRequests[M]['params'];
export type ResultOf<M extends RequestMethod> = AllHostRequests[M]['result'];
type SP<M extends keyof AllSidecarRequests> = AllSidecarRequests[M]['params'];
type SR<M extends keyof AllSidecarRequests> = AllSidecarRequests[M]['result'];
type SN<M extends keyof AllSidecarNotifications> = AllSidecarNotifications[M]['params'];

export type ApprovalRequest = SN<'approval/request'>;
/**
 * `remember` keeps an approval (`session`: this plan session's calls for the sidecar's run;
 * `always`: every call, in cacheDir, until `approvalRevoke`). Only `approve` is remembered.
 */
export type ApprovalAnswer = ApprovalDecision | { decision: ApprovalDecision; reason?: string; remember?: ParamsOf<'approval/respond'>['remember'] };
export type ExecuteToolParams = SP<'host/executeTool'>;
export type RepairToolCallParams = SP<'host/repairToolCall'>;
export type CatalogDidChangeParams = SN<'catalog/didChange'>;
export type ApprovalWithdrawnParams = SN<'approval/withdrawn'>;
export type ResourcesChangedParams = SN<'catalog/resourcesChanged'>;
export type PromptsChangedParams = SN<'catalog/promptsChanged'>;
export type ResourceUpdatedParams = SN<'catalog/resourceUpdated'>;
export type ElicitParams = SP<'host/elicit'>;
export type ElicitAnswer = SR<'host/elicit'>;
export type SampleParams = SP<'host/sample'>;
export type SampleAnswer = SR<'host/sample'>;
export type RootsParams = SP<'host/roots'>;
export type RootsAnswer = SR<'host/roots'>;
export type OpenUrlParams = SP<'host/openUrl'>;
export type EmbedParams = SP<'host/embed'>;
export type EmbedAnswer = SR<'host/embed'>;

/**
 * Where the sidecar keeps OAuth tokens of MCP servers (`host/secrets/*`), e.g. the OS keychain.
 * Keys look like `toolreg/oauth/<serverId>`; values are opaque text holding tokens: never log them.
 */
export interface SecretStore {
  get(key: string): string | null | undefined | Promise<string | null | undefined>;
  set(key: string, value: string): void | Promise<void>;
  delete(key: string): void | Promise<void>;
}

/** A `SecretStore` in memory: tokens last as long as this process. */
export class MemorySecretStore implements SecretStore {
  private readonly values = new Map<string, string>();
  get(key: string): string | undefined {
    return this.values.get(key);
  }
  set(key: string, value: string): void {
    this.values.set(key, value);
  }
  delete(key: string): void {
    this.values.delete(key);
  }
}

/**
 * The `reason` of the signal given to `onApprovalRequest` when the sidecar withdrew the request
 * (`approval/withdrawn`: it timed out, or the call was cancelled). `name` is `'AbortError'`.
 */
export class ApprovalWithdrawnError extends Error {
  override name = 'AbortError';
  constructor(
    readonly approvalId: string,
    /** `timeout` or `cancelled`, as the sidecar said. */
    readonly withdrawnReason: string,
  ) {
    super(`approval ${approvalId} withdrawn by the sidecar (${withdrawnReason})`);
  }
}

/** Per-call options. */
export interface CallOptions {
  /** Aborting rejects the call at once with an `AbortError` and sends `$/cancelRequest`. */
  signal?: AbortSignal;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last lines the sidecar wrote to stderr. */
  stderr: string[];
  /** Whether the exit followed `close()` (shutdown + exit). */
  expected: boolean;
}

export interface SpawnOptions {
  /** Default: env TOOLREG_BIN, else the binary of the installed `@toolreg/cli-<platform>` package, else `toolreg` on PATH. */
  binaryPath?: string;
  /** Default `['serve']`. */
  args?: string[];
  /** Environment of the sidecar (default: this process's environment). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  clientInfo?: { name: string; version?: string };
  /**
   * Extra capabilities; `approval`/`hostTools`/`repair`/`elicitation`/`sampling` default to
   * whether the callback is given. `apps: {mimeTypes: ['text/html;profile=mcp-app']}` says the
   * host renders MCP Apps views (tools then carry `ui`; see protocol/README.md).
   */
  capabilities?: HostCapabilities;
  cacheDir?: string;
  /** The sidecar's log settings, sent in `initialize`. */
  log?: LogSettings;
  /** Timeouts (ms) sent in `initialize`: connect, list, call, approval, elicitation. */
  timeouts?: Timeouts;
  /** `initialize.results`: the token budget of one tool result, and `media` (`'model'` or `'placeholder'`). */
  results?: ResultSettings;
  /**
   * `tool_search`'s semantic signal, sent in `initialize` (default: lexical only). With
   * `onEmbed` and no `search.embeddings`, `{embeddings: {kind: 'host'}}` is sent.
   */
  search?: SearchSettings;
  /**
   * With no `search.embeddings` and no `onEmbed`: send the local models installed, MiniLM when
   * `@toolreg/model-minilm` and `onnxruntime-node` are, USE-m3 when `@toolreg/model-use-m3` is
   * (or `TOOLREG_EMBEDDING_DIR` has them), both as a list when both are; with none the search
   * stays lexical and a warning (code `TOOLREG_LEXICAL`) is emitted once per process. `false`:
   * lexical, nothing looked for. Default true.
   */
  localModel?: boolean;
  /** Called for each stderr line of the sidecar (the sidecar logs to stderr by default). */
  onStderr?: (line: string) => void;
  /**
   * Ask the user. `signal` aborts when the answer is moot: the sidecar sent `approval/withdrawn`
   * for this `approvalId` (it timed out, or the call was cancelled; `signal.reason` is an
   * `ApprovalWithdrawnError`), or the `toolInvoke` call with the same `callId` made through this
   * client has settled. The client then sends no `approval/respond`; close the prompt.
   */
  onApprovalRequest?: (req: ApprovalRequest, signal: AbortSignal) => ApprovalAnswer | Promise<ApprovalAnswer>;
  onExecuteTool?: (params: ExecuteToolParams, signal: AbortSignal) => SR<'host/executeTool'> | Promise<SR<'host/executeTool'>>;
  onRepairToolCall?: (
    params: RepairToolCallParams,
    signal: AbortSignal,
  ) => SR<'host/repairToolCall'> | Promise<SR<'host/repairToolCall'>>;
  /**
   * An MCP server asks the user something during a tool call (`host/elicit`). Answer
   * `{action: 'accept', content}` (form mode; fields left out get the schema's defaults),
   * `{action: 'accept'}` (URL mode: the user agreed to open `url`), `decline` or `cancel`.
   * `signal` aborts when the sidecar withdraws the question (timeout, cancelled call); close the
   * prompt then. A throw is an error for the server. Giving it declares `elicitation`.
   */
  onElicit?: (params: ElicitParams, signal: AbortSignal) => ElicitAnswer | Promise<ElicitAnswer>;
  /**
   * An MCP server asks the host's model for a completion (`host/sample`): `params.request` is the
   * MCP `CreateMessageRequestParams`; answer an MCP `CreateMessageResult`. Let the user review
   * both. `signal` as for `onElicit`. Giving it declares `sampling`.
   */
  onSample?: (params: SampleParams, signal: AbortSignal) => SampleAnswer | Promise<SampleAnswer>;
  /**
   * An MCP server asks for the directories it may work in (`roots/list`, `host/roots`): answer
   * `{roots: [{uri: 'file:///...', name?}]}`. `signal` as for `onElicit`. Giving it declares `roots`.
   */
  onRoots?: (params: RootsParams, signal: AbortSignal) => RootsAnswer | Promise<RootsAnswer>;
  /**
   * Embeds texts for `tool_search` (`host/embed`) with the host's embedding model (e.g. the one
   * its knowledge base uses): one vector per text, in order, and the model's name. `purpose` is
   * `query` or `document`. Giving it turns on hybrid search (`search.embeddings.kind = 'host'`).
   */
  onEmbed?: (params: EmbedParams, signal: AbortSignal) => EmbedAnswer | Promise<EmbedAnswer>;
  /**
   * MCP authorization (OAuth): show the user `url`, an authorization page for MCP server
   * `serverId` (e.g. in the system browser), and resolve once it is shown; the sidecar learns the
   * outcome from the redirect to its loopback listener. Declares the `openUrl` capability.
   */
  onOpenUrl?: (params: OpenUrlParams) => void | Promise<void>;
  /** Keeps OAuth tokens for the sidecar; declares `secrets`. Without it tokens live in the sidecar's memory. */
  secrets?: SecretStore;
  onCatalogDidChange?: (params: CatalogDidChangeParams) => void;
  /** A server's resource list (or templates) changed: list again (`catalogListResources`). */
  onResourcesChanged?: (params: ResourcesChangedParams) => void;
  /** A server's prompt list changed: list again (`catalogListPrompts`). */
  onPromptsChanged?: (params: PromptsChangedParams) => void;
  /** A resource subscribed with `catalogSubscribeResource` changed: read it again. */
  onResourceUpdated?: (params: ResourceUpdatedParams) => void;
  onProgress?: (params: ProgressParams) => void;
  onLogMessage?: (params: LogMessageParams) => void;
  /** Called once when the sidecar process ends, expectedly or not. */
  onExit?: (info: ExitInfo) => void;
  /** Errors inside the client that have no caller to reject (e.g. a failed `approval/respond`). */
  onError?: (error: Error) => void;
  /** How many stderr lines to keep for `ToolregExitedError`. Default 50. */
  stderrLines?: number;
}

/** A JSON-RPC error response from the sidecar. */
export class ToolregRpcError extends Error {
  override name = 'ToolregRpcError';
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`${method}: ${message} (${code})`);
  }
}

/** The sidecar speaks a protocol version this client cannot (see `protocolCompatible`). */
export class ToolregProtocolVersionError extends Error {
  override name = 'ToolregProtocolVersionError';
  constructor(
    readonly binary: string,
    readonly sidecarVersion: string,
    readonly clientVersion: string = PROTOCOL_VERSION,
  ) {
    super(
      `the toolreg sidecar ${binary} speaks protocol ${sidecarVersion}, this client (toolreg-client ${CLIENT_VERSION}) speaks protocol ${clientVersion}: ` +
        'install matching versions (the toolreg-client package brings its own binary), or point binaryPath / TOOLREG_BIN at a matching one',
    );
  }
}

/** The sidecar process ended (or could not start) while a call was pending or was made afterwards. */
export class ToolregExitedError extends Error {
  override name = 'ToolregExitedError';
  constructor(
    readonly exitCode: number | null,
    readonly signal: NodeJS.Signals | null,
    readonly stderr: string[],
    readonly method?: string,
  ) {
    const how = signal ? `killed by ${signal}` : `exited with code ${exitCode}`;
    const tail = stderr.length ? `; last stderr lines:\n${stderr.slice(-10).join('\n')}` : '';
    super(`toolreg sidecar ${how}${method ? ` during ${method}` : ''}${tail}`);
  }

  /** The process could not be started at all (e.g. ENOENT); `cause` is the spawn error. */
  static spawnFailed(binary: string, cause: Error): ToolregExitedError {
    const e = new ToolregExitedError(null, null, [], 'spawn');
    e.message = `could not start the toolreg sidecar ${binary}: ${cause.message}`;
    (e as { cause?: unknown }).cause = cause;
    return e;
  }
}

function abortError(signal: AbortSignal): Error {
  if (signal.reason instanceof Error) return signal.reason;
  const e = new Error('The operation was aborted');
  e.name = 'AbortError';
  return e;
}

/**
 * vscode-jsonrpc 8 rethrows a failed request write from inside a promise executor, which surfaces
 * as an unhandledRejection in the host. Writes to a dying sidecar are expected; this writer never
 * rejects, and the exit handler rejects the pending calls instead.
 */
class SafeWriter implements MessageWriter {
  constructor(
    private readonly inner: StreamMessageWriter,
    private readonly onWriteError: (e: Error) => void,
  ) {}
  get onError() {
    return this.inner.onError;
  }
  get onClose() {
    return this.inner.onClose;
  }
  async write(msg: Message): Promise<void> {
    try {
      await this.inner.write(msg);
    } catch (e) {
      this.onWriteError(e as Error);
    }
  }
  end(): void {
    this.inner.end();
  }
  dispose(): void {
    this.inner.dispose();
  }
}

function tokenToSignal(token: CancellationToken): AbortSignal {
  const ac = new AbortController();
  if (token.isCancellationRequested) ac.abort();
  else token.onCancellationRequested(() => ac.abort());
  return ac.signal;
}

export class ToolregClient {
  /** The `initialize` result. */
  initializeResult!: InitializeResult;
  /** The packaged MiniLM's paths when `spawn` found and sent them (`localModel`). */
  localModel?: LocalModel;
  /** Every packaged model `spawn` found and sent (MiniLM, USE-m3), empty when none. */
  localModels: (LocalModel | LocalUseModel)[] = [];
  private exitInfo: ExitInfo | null = null;
  private readonly pending = new Set<(e: Error) => void>();
  /** callId -> open approval dialogs (their AbortControllers) and in-flight tool/invoke calls. */
  private readonly approvalsByCall = new Map<string, Set<AbortController>>();
  /** approvalId -> the AbortController of its open approval dialog. */
  private readonly approvalsById = new Map<string, AbortController>();
  private readonly invokesInFlight = new Map<string, number>();
  private readonly stderrTail: string[] = [];
  private closing = false;
  private streamClosed = false;
  private readonly exited: Promise<ExitInfo>;
  private resolveExited!: (info: ExitInfo) => void;

  private constructor(
    readonly process: ChildProcess,
    private readonly connection: MessageConnection,
    private readonly options: SpawnOptions,
  ) {
    this.exited = new Promise((r) => (this.resolveExited = r));
  }

  /** Spawns the sidecar, runs `initialize` and `initialized`. */
  static async spawn(options: SpawnOptions = {}): Promise<ToolregClient> {
    const binary = resolveBinary(options.binaryPath);
    const child = spawnProcess(binary, options.args ?? ['serve'], {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let client: ToolregClient | undefined;
    const writer = new SafeWriter(new StreamMessageWriter(child.stdin!), (e) => client?.writeFailed(e));
    const connection = createMessageConnection(new StreamMessageReader(child.stdout!), writer);
    client = new ToolregClient(child, connection, options);
    client.wire();
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    try {
      await spawned;
    } catch (e) {
      connection.dispose();
      throw ToolregExitedError.spawnFailed(binary, e as Error);
    }
    const caps: HostCapabilities = {
      approval: !!options.onApprovalRequest,
      hostTools: !!options.onExecuteTool,
      repair: !!options.onRepairToolCall,
      elicitation: !!options.onElicit,
      sampling: !!options.onSample,
      roots: !!options.onRoots,
      openUrl: !!options.onOpenUrl,
      secrets: !!options.secrets,
      ...options.capabilities,
    };
    const params: InitializeParams = {
      clientInfo: options.clientInfo ?? { name: 'toolreg-client-ts', version: CLIENT_VERSION },
      protocolVersion: PROTOCOL_VERSION,
      capabilities: caps,
    };
    if (options.cacheDir !== undefined) params.cacheDir = options.cacheDir;
    if (options.log !== undefined) params.log = options.log;
    if (options.timeouts !== undefined) params.timeouts = options.timeouts;
    if (options.results !== undefined) params.results = options.results;
    if (options.search !== undefined) params.search = options.search;
    if (options.onEmbed && !params.search?.embeddings) params.search = { ...params.search, embeddings: { kind: 'host' } };
    if (options.localModel !== false && !params.search?.embeddings) {
      const found = findLocalModels(options.env ?? process.env);
      if (found.length) {
        params.search = { ...params.search, embeddings: found.length === 1 ? found[0]! : found };
        client.localModels = found;
        client.localModel = found.find((m): m is LocalModel => m.kind === 'onnx');
      } else noticeLexical();
    }
    try {
      client.initializeResult = await client.request('initialize', params);
      const spoken = client.initializeResult.protocolVersion;
      if (!protocolCompatible(PROTOCOL_VERSION, spoken)) throw new ToolregProtocolVersionError(binary, spoken);
      await client.notify('initialized', {});
    } catch (e) {
      client.kill();
      throw e;
    }
    return client;
  }

  private wire(): void {
    const { process: child, connection, options } = this;
    const keep = options.stderrLines ?? 50;
    let partial = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) this.pushStderr(line, keep);
    });
    child.stderr!.on('end', () => {
      if (partial) this.pushStderr(partial, keep);
      partial = '';
    });
    // A write to a dead process must not crash the host.
    child.stdin!.on('error', () => {});
    child.stdout!.on('error', () => {});
    child.on('error', (e) => this.reportError(e));
    child.once('exit', (code, signal) => {
      // Let stderr drain (the 'close' event), but do not wait for it forever.
      const finish = () => this.onProcessEnd(code, signal);
      const timer = setTimeout(finish, 200);
      child.once('close', () => {
        clearTimeout(timer);
        finish();
      });
    });

    connection.onNotification('approval/request', (p: ApprovalRequest) => void this.handleApproval(p));
    connection.onNotification('approval/withdrawn', (p: ApprovalWithdrawnParams) => {
      const open = this.approvalsById.get(p.approvalId);
      if (!open) return; // already answered (or never seen): nothing to close
      this.approvalsById.delete(p.approvalId);
      open.abort(new ApprovalWithdrawnError(p.approvalId, p.reason));
    });
    connection.onNotification('catalog/didChange', (p: CatalogDidChangeParams) => options.onCatalogDidChange?.(p));
    connection.onNotification('catalog/resourcesChanged', (p: ResourcesChangedParams) => options.onResourcesChanged?.(p));
    connection.onNotification('catalog/promptsChanged', (p: PromptsChangedParams) => options.onPromptsChanged?.(p));
    connection.onNotification('catalog/resourceUpdated', (p: ResourceUpdatedParams) => options.onResourceUpdated?.(p));
    connection.onNotification('$/progress', (p: ProgressParams) => options.onProgress?.(p));
    connection.onNotification('window/logMessage', (p: LogMessageParams) => options.onLogMessage?.(p));
    connection.onRequest('host/executeTool', async (p: ExecuteToolParams, token: CancellationToken) => {
      if (!options.onExecuteTool) throw new ResponseError(-32601, 'host has no onExecuteTool handler');
      return this.callbackResult(token, () => options.onExecuteTool!(p, tokenToSignal(token)));
    });
    connection.onRequest('host/repairToolCall', async (p: RepairToolCallParams, token: CancellationToken) => {
      if (!options.onRepairToolCall) throw new ResponseError(-32601, 'host has no onRepairToolCall handler');
      return (await this.callbackResult(token, () => options.onRepairToolCall!(p, tokenToSignal(token)))) ?? null;
    });
    connection.onRequest('host/elicit', async (p: ElicitParams, token: CancellationToken) => {
      if (!options.onElicit) throw new ResponseError(-32601, 'host has no onElicit handler');
      return this.callbackResult(token, () => options.onElicit!(p, tokenToSignal(token)));
    });
    connection.onRequest('host/sample', async (p: SampleParams, token: CancellationToken) => {
      if (!options.onSample) throw new ResponseError(-32601, 'host has no onSample handler');
      return this.callbackResult(token, () => options.onSample!(p, tokenToSignal(token)));
    });
    connection.onRequest('host/roots', async (p: RootsParams, token: CancellationToken) => {
      if (!options.onRoots) throw new ResponseError(-32601, 'host has no onRoots handler');
      return this.callbackResult(token, () => options.onRoots!(p, tokenToSignal(token)));
    });
    connection.onRequest('host/embed', async (p: EmbedParams, token: CancellationToken) => {
      if (!options.onEmbed) throw new ResponseError(-32601, 'host has no onEmbed handler');
      return this.callbackResult(token, () => options.onEmbed!(p, tokenToSignal(token)));
    });
    connection.onRequest('host/openUrl', async (p: OpenUrlParams) => {
      if (!options.onOpenUrl) throw new ResponseError(-32601, 'host has no onOpenUrl handler');
      await options.onOpenUrl(p);
      return {};
    });
    const store = (): SecretStore => {
      if (!options.secrets) throw new ResponseError(-32601, 'host has no secrets store');
      return options.secrets;
    };
    connection.onRequest('host/secrets/get', async (p: { key: string }) => ({ value: (await store().get(p.key)) ?? null }));
    connection.onRequest('host/secrets/set', async (p: { key: string; value: string }) => {
      await store().set(p.key, p.value);
      return {};
    });
    connection.onRequest('host/secrets/delete', async (p: { key: string }) => {
      await store().delete(p.key);
      return {};
    });
    connection.onError(([e]) => this.reportError(e));
    connection.onClose(() => {
      this.streamClosed = true;
      // A sidecar that closed its stdout can answer nothing more: make sure it ends, so that the
      // exit handler rejects what is pending.
      setTimeout(() => {
        if (!this.exitInfo) this.kill('SIGKILL');
      }, 2000).unref();
    });
    connection.listen();
  }

  private pushStderr(line: string, keep: number): void {
    this.stderrTail.push(line);
    if (this.stderrTail.length > keep) this.stderrTail.shift();
    this.options.onStderr?.(line);
  }

  private async callbackResult<T>(token: CancellationToken, f: () => T | Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (e) {
      if (e instanceof ResponseError) throw e;
      if (token.isCancellationRequested) throw new ResponseError(-32800, 'request cancelled');
      throw new ResponseError(-32603, e instanceof Error ? e.message : String(e));
    }
  }

  private async handleApproval(p: ApprovalRequest): Promise<void> {
    let decision: ApprovalDecision = 'deny';
    let reason: string | undefined;
    let remember: ParamsOf<'approval/respond'>['remember'];
    const moot = new AbortController();
    const open = this.approvalsByCall.get(p.callId) ?? new Set<AbortController>();
    open.add(moot);
    this.approvalsByCall.set(p.callId, open);
    this.approvalsById.set(p.approvalId, moot);
    try {
      if (!this.options.onApprovalRequest) reason = 'the host has no approval handler';
      else {
        const answer = await this.options.onApprovalRequest(p, moot.signal);
        if (typeof answer === 'string') decision = answer;
        else ({ decision, reason, remember } = answer);
      }
    } catch (e) {
      reason = `approval handler failed: ${e instanceof Error ? e.message : String(e)}`;
    }
    open.delete(moot);
    if (this.approvalsById.get(p.approvalId) === moot) this.approvalsById.delete(p.approvalId);
    if (open.size === 0 && this.approvalsByCall.get(p.callId) === open) this.approvalsByCall.delete(p.callId);
    if (moot.signal.aborted) return; // withdrawn, or the call is over: nobody waits for this answer
    if (decision !== 'approve' && decision !== 'deny') {
      reason = `approval handler answered ${JSON.stringify(decision)}`;
      decision = 'deny';
    }
    const params: ParamsOf<'approval/respond'> = { approvalId: p.approvalId, decision };
    if (reason !== undefined) params.reason = reason;
    if (remember !== undefined && decision === 'approve') params.remember = remember;
    try {
      await this.request('approval/respond', params);
    } catch (e) {
      this.reportError(e as Error);
    }
  }

  private invokeSettled(callId: string): void {
    const left = (this.invokesInFlight.get(callId) ?? 1) - 1;
    if (left > 0) {
      this.invokesInFlight.set(callId, left);
      return;
    }
    this.invokesInFlight.delete(callId);
    const open = this.approvalsByCall.get(callId);
    if (!open) return;
    this.approvalsByCall.delete(callId);
    for (const c of open) c.abort();
  }

  /** @internal */
  writeFailed(e: Error): void {
    // The process is gone or going: its exit rejects the pending calls. Anything else is reported.
    if (!this.exitInfo && this.process.exitCode === null && this.process.signalCode === null && this.process.stdin?.writable) this.reportError(e);
  }

  private reportError(e: Error): void {
    if (this.options.onError) this.options.onError(e);
  }

  private onProcessEnd(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exitInfo) return;
    const info: ExitInfo = { code, signal, stderr: [...this.stderrTail], expected: this.closing };
    this.exitInfo = info;
    for (const reject of [...this.pending]) reject(new ToolregExitedError(code, signal, info.stderr));
    this.pending.clear();
    this.connection.dispose();
    this.resolveExited(info);
    try {
      this.options.onExit?.(info);
    } catch (e) {
      this.reportError(e as Error);
    }
  }

  /** Whether the sidecar process has ended. */
  get isExited(): boolean {
    return this.exitInfo !== null;
  }

  /** Resolves when the sidecar process has ended. */
  waitForExit(): Promise<ExitInfo> {
    return this.exited;
  }

  /** Sends any request by name; the typed methods below call this. */
  request<M extends RequestMethod>(method: M, params: ParamsOf<M>, options?: CallOptions): Promise<ResultOf<M>>;
  request(method: string, params?: unknown, options?: CallOptions): Promise<unknown>;
  request(method: string, params?: unknown, options: CallOptions = {}): Promise<unknown> {
    const { signal } = options;
    if (this.exitInfo) {
      const { code, signal: sig, stderr } = this.exitInfo;
      return Promise.reject(new ToolregExitedError(code, sig, stderr, method));
    }
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (params !== undefined) {
      // Checked here: vscode-jsonrpc would only log a failed write and leave the call pending.
      if (params === null || typeof params !== 'object' || Array.isArray(params)) {
        return Promise.reject(new TypeError(`${method}: params must be an object (by name), got ${params === null ? 'null' : Array.isArray(params) ? 'an array' : typeof params}`));
      }
      try {
        JSON.stringify(params);
      } catch (e) {
        return Promise.reject(new TypeError(`${method}: params are not JSON: ${(e as Error).message}`));
      }
    }
    const callId = method === 'tool/invoke' && params ? (params as { callId?: unknown }).callId : undefined;
    if (typeof callId === 'string') this.invokesInFlight.set(callId, (this.invokesInFlight.get(callId) ?? 0) + 1);
    return new Promise((resolve, reject) => {
      const cts = new CancellationTokenSource();
      let settled = false;
      const done = () => {
        settled = true;
        if (typeof callId === 'string') this.invokeSettled(callId);
        this.pending.delete(onExit);
        signal?.removeEventListener('abort', onAbort);
        cts.dispose();
      };
      const onExit = (e: Error) => {
        if (settled) return;
        done();
        if (e instanceof ToolregExitedError) e = new ToolregExitedError(e.exitCode, e.signal, e.stderr, method);
        reject(e);
      };
      const onAbort = () => {
        if (settled) return;
        cts.cancel(); // sends $/cancelRequest
        done();
        reject(abortError(signal!));
      };
      this.pending.add(onExit);
      signal?.addEventListener('abort', onAbort, { once: true });
      let sent: Promise<unknown>;
      try {
        sent =
          params === undefined
            ? this.connection.sendRequest(method, cts.token)
            : this.connection.sendRequest(method, ParameterStructures.byName, params, cts.token);
      } catch (e) {
        // The stream closed before the exit event: the exit handler rejects this call shortly.
        if (this.streamClosed) return;
        done();
        reject(e);
        return;
      }
      sent.then(
        (result) => {
          if (settled) return;
          done();
          resolve(result);
        },
        (e: unknown) => {
          if (settled) return;
          done();
          if (e instanceof ResponseError) reject(new ToolregRpcError(method, e.code, e.message, e.data));
          else if (this.exitInfo) onExit(new ToolregExitedError(this.exitInfo.code, this.exitInfo.signal, this.exitInfo.stderr));
          else reject(e);
        },
      );
    });
  }

  /** Sends a notification by name. */
  async notify<M extends keyof HostNotifications & string>(method: M, params?: HostNotifications[M]['params']): Promise<void>;
  async notify(method: string, params?: unknown): Promise<void>;
  async notify(method: string, params?: unknown): Promise<void> {
    if (this.exitInfo) throw new ToolregExitedError(this.exitInfo.code, this.exitInfo.signal, this.exitInfo.stderr, method);
    try {
      if (params === undefined) await this.connection.sendNotification(method);
      else await this.connection.sendNotification(method, ParameterStructures.byName, params);
    } catch (e) {
      if (!this.streamClosed) throw e;
      const { code, signal, stderr } = await this.exited;
      throw new ToolregExitedError(code, signal, stderr, method);
    }
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  shutdown(options?: CallOptions): Promise<ResultOf<'shutdown'>> {
    return this.request('shutdown', undefined as unknown as ParamsOf<'shutdown'>, options);
  }

  /** `shutdown` + `exit`, then waits for the process (SIGKILL after `timeoutMs`, default 5000). */
  async close(timeoutMs = 5000): Promise<ExitInfo> {
    if (this.exitInfo) return this.exitInfo;
    this.closing = true;
    const timer = setTimeout(() => this.kill('SIGKILL'), timeoutMs);
    try {
      await this.shutdown();
      await this.notify('exit');
      this.process.stdin?.end();
    } catch {
      // The process may already be gone (or killed by the timer); the exit info says how it ended.
    }
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Kills the process (default SIGTERM) without the shutdown handshake. */
  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (!this.exitInfo) this.process.kill(signal);
  }

  // ---- registry -------------------------------------------------------------------------------

  registryRegister(params: ParamsOf<'registry/register'>, options?: CallOptions) {
    return this.request('registry/register', params, options);
  }
  registryDeregister(params: ParamsOf<'registry/deregister'>, options?: CallOptions) {
    return this.request('registry/deregister', params, options);
  }
  registryList(params: ParamsOf<'registry/list'> = {}, options?: CallOptions) {
    return this.request('registry/list', params, options);
  }
  registrySelectActive(params: ParamsOf<'registry/selectActive'> = {}, options?: CallOptions) {
    return this.request('registry/selectActive', params, options);
  }
  registryResolveMcpToolIds(params: ParamsOf<'registry/resolveMcpToolIds'> = {}, options?: CallOptions) {
    return this.request('registry/resolveMcpToolIds', params, options);
  }
  registrySyncMcp(params: ParamsOf<'registry/syncMcp'> = {}, options?: CallOptions) {
    return this.request('registry/syncMcp', params, options);
  }

  // ---- exposition and tools -------------------------------------------------------------------

  /**
   * The plan for one model request. With `ifNoneMatch` (a `planHash` the host holds) the answer
   * may be `{planId, planHash, unchanged: true}`; without it, always the whole plan.
   */
  expositionPlan(params: ParamsOf<'exposition/plan'> & { ifNoneMatch: string }, options?: CallOptions): Promise<PlanReply>;
  expositionPlan(params?: Omit<ParamsOf<'exposition/plan'>, 'ifNoneMatch'>, options?: CallOptions): Promise<PlanResult>;
  expositionPlan(params: ParamsOf<'exposition/plan'> = {}, options?: CallOptions): Promise<PlanReply> {
    return this.request('exposition/plan', params, options);
  }
  /**
   * A plan's deferred definitions (all, or `names`), for a host whose own loop defers tools and
   * loads what a search finds (the AI SDK 7 `toolSearch`); `schemas: false` gives names and
   * descriptions only, and `systemPrompt` the `<DEFERRED_TOOLS>` section for such a search.
   */
  expositionDefinitions(params: ParamsOf<'exposition/definitions'>, options?: CallOptions) {
    return this.request('exposition/definitions', params, options);
  }
  /**
   * Runs a tool. A call from an MCP Apps view passes `app: {serverId}` (the server whose view
   * asks): it reaches only that server's tools whose visibility has `"app"`; anything else is an
   * `isError` refusal. A result of a tool with a view carries `ui: {serverId, resourceUri}`.
   */
  toolInvoke(params: ParamsOf<'tool/invoke'>, options?: CallOptions) {
    return this.request('tool/invoke', params, options);
  }
  approvalRespond(params: ParamsOf<'approval/respond'>, options?: CallOptions) {
    return this.request('approval/respond', params, options);
  }
  /** The approvals the user asked to remember: this run's session grants, then the lasting ones. */
  approvalGrants(params: ParamsOf<'approval/grants'> = {}, options?: CallOptions) {
    return this.request('approval/grants', params, options);
  }
  /** Revokes the remembered approvals of one tool (`{tool}`), or all (`{all: true}`). */
  approvalRevoke(params: ParamsOf<'approval/revoke'>, options?: CallOptions) {
    return this.request('approval/revoke', params, options);
  }

  // ---- MCP catalog ----------------------------------------------------------------------------

  catalogSetServers(params: ParamsOf<'catalog/setServers'>, options?: CallOptions) {
    return this.request('catalog/setServers', params, options);
  }
  catalogListTools(params: ParamsOf<'catalog/listTools'>, options?: CallOptions) {
    return this.request('catalog/listTools', params, options);
  }
  catalogRefresh(params: ParamsOf<'catalog/refresh'>, options?: CallOptions) {
    return this.request('catalog/refresh', params, options);
  }
  catalogRestart(params: ParamsOf<'catalog/restart'>, options?: CallOptions) {
    return this.request('catalog/restart', params, options);
  }
  catalogStatus(options?: CallOptions) {
    return this.request('catalog/status', undefined as unknown as ParamsOf<'catalog/status'>, options);
  }
  /** Every tool of a server's current list with its pin: approved, changed (with a diff) or new. */
  catalogPins(params: ParamsOf<'catalog/pins'>, options?: CallOptions) {
    return this.request('catalog/pins', params, options);
  }
  /**
   * Resources of one server (`serverId`) or of every enabled server that offers them, from the
   * cache (never waits on a server; `pending` names servers whose list is not known yet).
   */
  catalogListResources(params: ParamsOf<'catalog/listResources'> = {}, options?: CallOptions) {
    return this.request('catalog/listResources', params, options);
  }
  catalogListResourceTemplates(params: ParamsOf<'catalog/listResourceTemplates'> = {}, options?: CallOptions) {
    return this.request('catalog/listResourceTemplates', params, options);
  }
  /** The MCP `ReadResourceResult` (`contents`) of one server's resource; MCP Apps views are read this way. */
  catalogReadResource(params: ParamsOf<'catalog/readResource'>, options?: CallOptions) {
    return this.request('catalog/readResource', params, options);
  }
  /** Changes then arrive as `catalog/resourceUpdated` (`onResourceUpdated`). */
  catalogSubscribeResource(params: ParamsOf<'catalog/subscribeResource'>, options?: CallOptions) {
    return this.request('catalog/subscribeResource', params, options);
  }
  catalogUnsubscribeResource(params: ParamsOf<'catalog/unsubscribeResource'>, options?: CallOptions) {
    return this.request('catalog/unsubscribeResource', params, options);
  }
  catalogListPrompts(params: ParamsOf<'catalog/listPrompts'> = {}, options?: CallOptions) {
    return this.request('catalog/listPrompts', params, options);
  }
  /** The MCP `GetPromptResult` (`messages`) of one server's prompt. */
  catalogGetPrompt(params: ParamsOf<'catalog/getPrompt'>, options?: CallOptions) {
    return this.request('catalog/getPrompt', params, options);
  }
  /** MCP `completion/complete` of one server: `{completion: {values, total?, hasMore?}}`. */
  catalogComplete(params: ParamsOf<'catalog/complete'>, options?: CallOptions) {
    return this.request('catalog/complete', params, options);
  }
  /** The server's skills (SEP-2640) as its `skills/list` gave them; reads no skill file. */
  catalogListSkills(params: ParamsOf<'catalog/listSkills'>, options?: CallOptions) {
    return this.request('catalog/listSkills', params, options);
  }
  /** A skill's files, each verified against the listing before the next is read. */
  catalogLoadSkill(params: ParamsOf<'catalog/loadSkill'>, options?: CallOptions) {
    return this.request('catalog/loadSkill', params, options);
  }
  /** Make the current definitions of these tools (names as the server calls them) the approved ones. */
  catalogApproveTools(params: ParamsOf<'catalog/approveTools'>, options?: CallOptions) {
    return this.request('catalog/approveTools', params, options);
  }
  /** A page of the MCP registry's servers (`initialize.mcpRegistry`) matching `query`. */
  catalogSearchRegistry(params: ParamsOf<'catalog/searchRegistry'>, options?: CallOptions) {
    return this.request('catalog/searchRegistry', params, options);
  }
  /**
   * A registry server resolved to a quarantined, pinned `ServerConfig` and the inputs the user
   * fills (each stands as `{name}` in it) before `catalogSetServers`.
   */
  catalogResolveRegistryServer(params: ParamsOf<'catalog/resolveRegistryServer'>, options?: CallOptions) {
    return this.request('catalog/resolveRegistryServer', params, options);
  }
  /** Each tool's usage (decayed count, last used, calls in the window) for one usage key, or every key. */
  usageList(params: ParamsOf<'usage/list'> = {}, options?: CallOptions) {
    return this.request('usage/list', params, options);
  }
  /** Forget the usage counted under one usage key, or under every key. */
  usageReset(params: ParamsOf<'usage/reset'> = {}, options?: CallOptions) {
    return this.request('usage/reset', params, options);
  }
}

