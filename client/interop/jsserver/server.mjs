// Test-only A2A server built from @a2a-js/sdk 1.3.0 for a2a-courier's
// interop tests; not part of the product.
//
// One listener hosts every agent under every mount:
//
//   POST <origin>/<mount>/<agent>                              JSON-RPC 2.0
//   GET  <origin>/<mount>/<agent>/.well-known/agent-card.json  the agent's card
//   <origin>/rest/<agent>/[<tenant>/]message:send, tasks/<id>, …  HTTP+JSON
//
// Mounts:
//   compat  v1.0 native with the SDK's v0.3 compatibility layer (legacyCompat);
//           the card declares a 1.0 and a 0.3 JSONRPC interface on one URL
//   v1      v1.0 only (legacyCompat off; the card declares only 1.0)
//   v03     v0.3 only (legacyCompat on; the card declares only 0.3)
//   rest    v1.0 over HTTP+JSON only (the SDK's restHandler; the card
//           declares a single HTTP+JSON 1.0 interface)
//
// Agents: echo (Message reply), slow (Task with chunked artifact), fail (Task
// ends failed), ask (Task goes input-required, a follow-up completes it),
// secure (echo behind a bearer token), parts (describes the parts it was
// sent) and files (answers with file and data parts).
//
// The first line on stdout is the bound origin, e.g. http://127.0.0.1:40123;
// everything else (including the SDK's own console output) goes to stderr.
// The protocol is entirely the SDK's; this file supplies agent behaviour,
// cards, and the bearer check in front of secure (Express middleware, the
// SDK's documented way to authenticate).

import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import express from 'express';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';

// Keep stdout for the origin line alone.
console.log = (...args) => console.error(...args);
console.info = (...args) => console.error(...args);

const TOKEN_ENV = 'A2A_INTEROP_TOKEN';

function usage(msg) {
  process.stderr.write(
    (msg ? `jsserver: ${msg}\n` : '') +
      'usage: node server.mjs [--addr 127.0.0.1:0] [--token T] [--slow-chunks 3] [--slow-delay 200ms]\n' +
      `  --token defaults to $${TOKEN_ENV}; the secure agent rejects everything without one\n`
  );
  process.exit(2);
}

let args;
try {
  args = parseArgs({
    options: {
      addr: { type: 'string', default: '127.0.0.1:0' },
      token: { type: 'string', default: '' },
      'slow-chunks': { type: 'string', default: '3' },
      'slow-delay': { type: 'string', default: '200ms' },
      help: { type: 'boolean', default: false },
    },
  }).values;
} catch (err) {
  usage(err.message);
}
if (args.help) usage();

const token = args.token || process.env[TOKEN_ENV] || '';
const slowDefaults = {
  chunks: parsePositiveInt(args['slow-chunks']) ?? usage('bad --slow-chunks'),
  delayMs: parseDurationMs(args['slow-delay']) ?? usage('bad --slow-delay'),
};
const lastColon = args.addr.lastIndexOf(':');
if (lastColon < 0) usage('--addr must be host:port');
const listenHost = args.addr.slice(0, lastColon).replace(/^\[|\]$/g, '') || '127.0.0.1';
const listenPort = Number(args.addr.slice(lastColon + 1));
if (!Number.isInteger(listenPort) || listenPort < 0 || listenPort > 65535) usage('bad port in --addr');

function parsePositiveInt(s) {
  const n = Number(s);
  return Number.isInteger(n) && n > 0 && n <= 1000 ? n : undefined;
}

// parseDurationMs reads "250ms", "1.5s", "2m" or a bare number of ms.
function parseDurationMs(s) {
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m)?$/.exec(String(s).trim());
  if (!m) return undefined;
  const n = Number(m[1]) * ({ ms: 1, s: 1000, m: 60000 }[m[2] ?? 'ms']);
  return n <= 60000 ? n : undefined;
}

// --- message helpers (v1.0 in-memory shapes; the SDK translates for v0.3) ---

function textPart(text) {
  return { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined };
}

function textOf(message) {
  return (message?.parts ?? [])
    .filter((p) => p.content?.$case === 'text')
    .map((p) => p.content.value)
    .join('\n');
}

function agentMessage(text, taskId, contextId) {
  return {
    messageId: randomUUID(),
    contextId,
    taskId: taskId ?? '',
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function now() {
  return new Date().toISOString();
}

function newTask(ctx) {
  return {
    id: ctx.taskId,
    contextId: ctx.contextId,
    status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
    artifacts: [],
    history: [ctx.userMessage],
    metadata: undefined,
  };
}

function status(ctx, state, text) {
  return AgentEvent.statusUpdate({
    taskId: ctx.taskId,
    contextId: ctx.contextId,
    status: {
      state,
      message: text === undefined ? undefined : agentMessage(text, ctx.taskId, ctx.contextId),
      timestamp: now(),
    },
    metadata: undefined,
  });
}

// taskContexts remembers each task's contextId for events published outside
// an execution (cancelTask only gets the task id).
const taskContexts = new Map();

// statusFor builds a status event outside an execution (cancel).
function statusFor(taskId, state, text) {
  const contextId = taskContexts.get(taskId) ?? '';
  return AgentEvent.statusUpdate({
    taskId,
    contextId,
    status: { state, message: text === undefined ? undefined : agentMessage(text, taskId, contextId), timestamp: now() },
    metadata: undefined,
  });
}

// The SDK requires a task (or message) as the first event of every
// execution, follow-up turns included.
function openTask(ctx, bus) {
  taskContexts.set(ctx.taskId, ctx.contextId);
  bus.publish(AgentEvent.task(ctx.task ?? newTask(ctx)));
}

// --- agents ---

class EchoAgent {
  async execute(ctx, bus) {
    bus.publish(AgentEvent.message(agentMessage('echo: ' + textOf(ctx.userMessage), undefined, ctx.contextId)));
  }
  async cancelTask() {}
}

class SlowAgent {
  constructor(defaults) {
    this.defaults = defaults;
    this.running = new Map(); // taskId -> AbortController
  }

  params(text) {
    let { chunks, delayMs } = this.defaults;
    const c = /\bchunks=(\d+)\b/.exec(text);
    if (c && parsePositiveInt(c[1]) !== undefined) chunks = Number(c[1]);
    const d = /\bdelay=([0-9.]+(?:ms|s|m))/.exec(text);
    if (d && parseDurationMs(d[1]) !== undefined) delayMs = parseDurationMs(d[1]);
    return { chunks, delayMs };
  }

  async execute(ctx, bus) {
    const { chunks, delayMs } = this.params(textOf(ctx.userMessage));
    const abort = new AbortController();
    this.running.set(ctx.taskId, abort);
    try {
      openTask(ctx, bus);
      bus.publish(status(ctx, TaskState.TASK_STATE_WORKING, 'working'));
      const artifactId = randomUUID();
      for (let i = 1; i <= chunks; i++) {
        if (!(await sleep(delayMs, abort.signal))) return; // canceled: cancelTask published the state
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId: ctx.taskId,
            contextId: ctx.contextId,
            artifact: {
              artifactId,
              name: i === 1 ? 'slow-output' : '',
              description: '',
              parts: [textPart(`chunk ${i}/${chunks}\n`)],
              metadata: undefined,
              extensions: [],
            },
            append: i > 1,
            lastChunk: i === chunks,
            metadata: undefined,
          })
        );
      }
      bus.publish(status(ctx, TaskState.TASK_STATE_COMPLETED, `done after ${chunks} chunks`));
    } finally {
      this.running.delete(ctx.taskId);
    }
  }

  async cancelTask(taskId, bus) {
    const abort = this.running.get(taskId);
    if (abort) abort.abort();
    bus.publish(statusFor(taskId, TaskState.TASK_STATE_CANCELED, 'canceled on request'));
  }
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const FAIL_REASON = 'fail agent: this task always fails';

class FailAgent {
  async execute(ctx, bus) {
    openTask(ctx, bus);
    bus.publish(status(ctx, TaskState.TASK_STATE_WORKING));
    bus.publish(status(ctx, TaskState.TASK_STATE_FAILED, FAIL_REASON));
  }
  async cancelTask(taskId, bus) {
    bus.publish(statusFor(taskId, TaskState.TASK_STATE_CANCELED));
  }
}

const ASK_QUESTION = 'What is your name?';

class AskAgent {
  async execute(ctx, bus) {
    openTask(ctx, bus);
    if (!ctx.task) {
      bus.publish(status(ctx, TaskState.TASK_STATE_INPUT_REQUIRED, ASK_QUESTION));
      return;
    }
    bus.publish(status(ctx, TaskState.TASK_STATE_WORKING));
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId: ctx.taskId,
        contextId: ctx.contextId,
        artifact: {
          artifactId: randomUUID(),
          name: 'greeting',
          description: '',
          parts: [textPart(`Hello, ${textOf(ctx.userMessage).trim()}!`)],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      })
    );
    bus.publish(status(ctx, TaskState.TASK_STATE_COMPLETED));
  }
  // An input-required task has no running execution, but the SDK keeps its
  // event bus alive and waits on it for the canceled state.
  async cancelTask(taskId, bus) {
    bus.publish(statusFor(taskId, TaskState.TASK_STATE_CANCELED, 'canceled on request'));
  }
}

// PartsAgent answers with a Message that describes each part it was sent,
// one line a part: its number, kind, filename and media type, then for a
// text its size and text, for a file its size and SHA-256 (hex), for a URL
// the URL, for data its JSON.
class PartsAgent {
  async execute(ctx, bus) {
    const lines = (ctx.userMessage?.parts ?? []).map((p, i) => describePart(p, i + 1));
    bus.publish(AgentEvent.message(agentMessage(lines.join('\n'), undefined, ctx.contextId)));
  }
  async cancelTask() {}
}

function describePart(p, n) {
  const c = p.content;
  const head = `${n} ${c?.$case ?? 'none'} name=${JSON.stringify(p.filename ?? '')} type=${JSON.stringify(p.mediaType ?? '')}`;
  switch (c?.$case) {
    case 'text':
      return `${head} size=${Buffer.byteLength(c.value)} text=${JSON.stringify(c.value)}`;
    case 'raw': {
      const b = Buffer.from(c.value);
      return `${head} size=${b.length} sha256=${createHash('sha256').update(b).digest('hex')}`;
    }
    case 'url':
      return `${head} url=${JSON.stringify(c.value)}`;
    case 'data':
      return `${head} json=${JSON.stringify(c.value)}`;
    default:
      return head;
  }
}

// What the files agent sends: a text file, a 1x1 PNG, a file by URL and a
// data part (interoptest holds the same constants).
const FILES_TEXT = 'hello from the files agent\n';
const FILES_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const FILES_DATA = { agent: 'files', files: 2, ok: true };
const FILES_URL = 'https://files.example.invalid/report.pdf';
const FILES_STATUS = 'files attached';

function filesParts() {
  return [
    textPart('Here are your files.'),
    { content: { $case: 'raw', value: Buffer.from(FILES_TEXT) }, mediaType: 'text/plain', filename: 'hello.txt', metadata: undefined },
    { content: { $case: 'raw', value: Buffer.from(FILES_PNG_BASE64, 'base64') }, mediaType: 'image/png', filename: 'pixel.png', metadata: undefined },
    { content: { $case: 'url', value: FILES_URL }, mediaType: 'application/pdf', filename: 'report.pdf', metadata: undefined },
    { content: { $case: 'data', value: FILES_DATA }, mediaType: 'application/json', filename: '', metadata: undefined },
  ];
}

// FilesAgent answers with file and data parts: in a Message when the text
// says "message", else in the artifact of a Task that completes with the
// status message "files attached".
class FilesAgent {
  async execute(ctx, bus) {
    if (/\bmessage\b/.test(textOf(ctx.userMessage))) {
      const m = agentMessage('', undefined, ctx.contextId);
      m.parts = filesParts();
      bus.publish(AgentEvent.message(m));
      return;
    }
    openTask(ctx, bus);
    bus.publish(status(ctx, TaskState.TASK_STATE_WORKING, 'packing files'));
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId: ctx.taskId,
        contextId: ctx.contextId,
        artifact: { artifactId: randomUUID(), name: 'files', description: '', parts: filesParts(), metadata: undefined, extensions: [] },
        append: false,
        lastChunk: true,
        metadata: undefined,
      })
    );
    bus.publish(status(ctx, TaskState.TASK_STATE_COMPLETED, FILES_STATUS));
  }
  async cancelTask(taskId, bus) {
    bus.publish(statusFor(taskId, TaskState.TASK_STATE_CANCELED));
  }
}

const AGENTS = {
  echo: { description: 'Replies with a Message that echoes the text it was sent.', make: () => new EchoAgent() },
  slow: {
    description:
      'Works for a while and streams a text artifact in chunks (append/lastChunk). ' +
      'Say chunks=N and delay=250ms in the message to tune it.',
    make: () => new SlowAgent(slowDefaults),
  },
  fail: { description: 'Starts a task and always ends it failed, with the reason in the status message.', make: () => new FailAgent() },
  ask: { description: 'Asks a question (input-required); a follow-up message on the same task completes it.', make: () => new AskAgent() },
  secure: { description: 'Echo agent that requires a bearer token.', make: () => new EchoAgent() },
  parts: {
    description: 'Replies with a Message describing each part it was sent (kind, name, media type, size, SHA-256, data JSON).',
    make: () => new PartsAgent(),
  },
  files: {
    description: 'Answers with a text file, a PNG, a file URL and a data part: in a Task, or a Message when asked for "message".',
    make: () => new FilesAgent(),
  },
};

const MOUNTS = {
  compat: { versions: ['1.0', '0.3'], legacyCompat: true, binding: 'JSONRPC' },
  v1: { versions: ['1.0'], legacyCompat: false, binding: 'JSONRPC' },
  v03: { versions: ['0.3'], legacyCompat: true, binding: 'JSONRPC' },
  rest: { versions: ['1.0'], legacyCompat: false, binding: 'HTTP+JSON' },
};

function agentCard(origin, mount, name) {
  const url = `${origin}/${mount}/${name}`;
  const card = {
    name,
    description: AGENTS[name].description,
    supportedInterfaces: MOUNTS[mount].versions.map((v) => ({
      url,
      protocolBinding: MOUNTS[mount].binding,
      tenant: '',
      protocolVersion: v,
    })),
    provider: { organization: 'a2a-courier interop (@a2a-js/sdk 1.3.0)', url: 'https://github.com/a2aproject/a2a-js' },
    version: '0.0.1',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: name,
        name,
        description: AGENTS[name].description,
        tags: ['test'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
  if (name === 'secure') {
    card.securitySchemes = {
      bearer: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: { description: 'static test token', scheme: 'Bearer', bearerFormat: '' },
        },
      },
    };
    card.securityRequirements = [{ schemes: { bearer: { list: [] } } }];
  }
  return card;
}

function tokenMatches(header) {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m || !token) return false;
  const got = Buffer.from(m[1].trim());
  const want = Buffer.from(token);
  return got.length === want.length && timingSafeEqual(got, want);
}

function requireBearer(req, res, next) {
  if (tokenMatches(req.header('authorization'))) return next();
  res
    .status(401)
    .set('WWW-Authenticate', 'Bearer realm="a2a-courier-interop"')
    .json({ error: 'missing or invalid bearer token' });
}

function buildApp(origin) {
  const app = express();
  for (const [mount, m] of Object.entries(MOUNTS)) {
    for (const name of Object.keys(AGENTS)) {
      const base = `/${mount}/${name}`;
      const handler = new DefaultRequestHandler(agentCard(origin, mount, name), new InMemoryTaskStore(), AGENTS[name].make());
      const compat = { enabled: m.legacyCompat };
      app.use(`${base}/.well-known/agent-card.json`, agentCardHandler({ agentCardProvider: handler, legacyCompat: compat }));
      if (name === 'secure') app.use(base, requireBearer);
      const serve = m.binding === 'HTTP+JSON' ? restHandler : jsonRpcHandler;
      app.use(base, serve({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat: compat }));
    }
  }
  return app;
}

// Bind first, then build the cards from the bound port.
const server = createServer();
server.on('error', (err) => {
  process.stderr.write(`jsserver: listen ${args.addr}: ${err.message}\n`);
  process.exit(1);
});
server.listen(listenPort, listenHost, () => {
  const { address, port } = server.address();
  const host = address === '0.0.0.0' || address === '::' ? '127.0.0.1' : address.includes(':') ? `[${address}]` : address;
  const origin = `http://${host}:${port}`;
  server.on('request', buildApp(origin));
  process.stdout.write(origin + '\n');
  if (!token) process.stderr.write(`jsserver: no bearer token configured ($${TOKEN_ENV}); the secure agent rejects every request\n`);
});

function shutdown() {
  server.close(() => process.exit(0));
  server.closeAllConnections?.();
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
