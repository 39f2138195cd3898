// sdkclient drives an A2A server with @a2a-js/sdk 1.3.0's own client, for
// a2a-courier's tests of `a2a-courier serve` (internal/serve): send
// (blocking), stream, get, list by contextId (1.0), cancel mid-run and
// subscribe. It fetches the card, keeps only the interface asked for
// (--binding JSONRPC|HTTP+JSON, --version 1.0|0.3), lets the SDK build its
// client from that card, and prints one JSON line per step on stdout:
// {"step", "ok", ...what it saw}. The token comes from $A2A_SDK_TOKEN.
// The agent must answer a message with its text in capitals, and wait
// (until canceled) when the text holds "wait".
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';

const { values: args } = parseArgs({
  options: { url: { type: 'string' }, binding: { type: 'string', default: 'JSONRPC' }, version: { type: 'string', default: '1.0' } },
});
const token = process.env.A2A_SDK_TOKEN ?? '';
const authFetch = (input, init = {}) => {
  const headers = new Headers(init.headers ?? {});
  if (token) headers.set('Authorization', `Bearer ${token}`);
  return fetch(input, { ...init, headers });
};

function out(step, ok, extra = {}) {
  process.stdout.write(JSON.stringify({ step, ok, ...extra }) + '\n');
}

function stateName(s) {
  return typeof s === 'number' ? TaskState[s] : String(s);
}

function textOfParts(parts) {
  return (parts ?? []).filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('');
}

function message(text, contextId) {
  return {
    messageId: randomUUID(), contextId, taskId: '', role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined }],
    metadata: undefined, extensions: [], referenceTaskIds: [],
  };
}

function request(text, contextId, returnImmediately) {
  return { tenant: '', message: message(text, contextId), metadata: undefined,
    configuration: { acceptedOutputModes: ['text/plain'], taskPushNotificationConfig: undefined, returnImmediately } };
}

async function main() {
  const base = args.url.replace(/\/$/, '');
  const card = await (await fetch(`${base}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json();
  card.supportedInterfaces = card.supportedInterfaces.filter((i) => i.protocolBinding === args.binding && i.protocolVersion === args.version);
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch, legacyCompat: { enabled: true } }),
      new RestTransportFactory({ fetchImpl: authFetch, legacyCompat: { enabled: true } })],
  });
  const client = await factory.createFromAgentCard(card);
  out('client', true, { protocol: client.protocolVersion ?? '' });

  const ctx = randomUUID();
  const res = await client.sendMessage(request('hello from a2a-js', ctx, false));
  const sent = 'status' in res ? res : undefined;
  out('send', !!sent, { state: stateName(sent?.status?.state), reply: textOfParts(sent?.artifacts?.[0]?.parts), contextId: sent?.contextId, taskId: sent?.id });

  const kinds = [];
  let streamed = '';
  let last = '';
  for await (const ev of client.sendMessageStream(request('stream from a2a-js', ctx, false))) {
    const p = ev.payload ?? ev;
    const kind = p.$case ?? p.kind;
    kinds.push(kind);
    if (kind === 'artifactUpdate') streamed += textOfParts(p.value.artifact.parts);
    if (kind === 'statusUpdate') last = stateName(p.value.status.state);
    if (kind === 'task') last = stateName(p.value.status.state);
  }
  out('stream', true, { kinds, reply: streamed, state: last });

  const got = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
  out('get', true, { state: stateName(got.status.state), reply: textOfParts(got.artifacts?.[0]?.parts) });

  if (args.version === '1.0') {
    const list = await client.listTasks({ tenant: '', contextId: ctx, status: 0, pageSize: 10, pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: true });
    out('list', true, { count: list.tasks.length, states: list.tasks.map((t) => stateName(t.status.state)) });
  }

  const running = await client.sendMessage(request('please wait', randomUUID(), true));
  const subStates = [];
  const sub = (async () => {
    for await (const ev of client.resubscribeTask({ tenant: '', id: running.id })) {
      const p = ev.payload ?? ev;
      if (p.$case === 'task' || p.kind === 'task') subStates.push(stateName((p.value ?? p).status.state));
      if (p.$case === 'statusUpdate' || p.kind === 'status-update') subStates.push(stateName((p.value ?? p).status.state));
    }
  })();
  // Cancel once the subscription has seen the task.
  for (let i = 0; i < 500 && subStates.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  const canceled = await client.cancelTask({ tenant: '', id: running.id, metadata: undefined });
  await sub;
  out('cancel', true, { before: stateName(running.status.state), state: stateName(canceled.status.state), subscribed: subStates });
}

main().catch((e) => {
  out('error', false, { message: String(e?.message ?? e) });
  process.exit(1);
});
