// The task-worker wake socket (WIRE §3.2) through the real path: a write queues a task,
// the effects consumer wakes the owner's TaskWake object, and the worker's socket gets
// `agent-task.available { app_id }` without credit, or `agent-task.assign` envelopes with
// it, never more than its latest absolute `ready` credit. One socket per owner serves
// every app of the owner. A key revoked after the socket opened gets no task: the socket
// closes. Refused upgrades answer catalogue errors.
import { describe, expect, it } from "vitest";
import { call, expectError, json, register } from "../helpers";
import { agentProtocols, Socket, socketsClosedAfterEach, type Frame } from "../live/helpers";
import { quietFor, waitFor } from "../../support/wait";
import { ack, claim, expectEnvelope, taskApp, taskManifest, tasksIn, write, type Envelope } from "./helpers";

const STREAM = "http://localhost:8787/v1/agent-tasks/stream";
const sockets = socketsClosedAfterEach();

async function wakeSocket(key: string): Promise<Socket> {
  const opened = await Socket.openAt(STREAM, agentProtocols(key));
  if (opened instanceof Response) throw new Error(`upgrade refused: ${opened.status} ${await opened.text()}`);
  expect(opened.res.headers.get("sec-websocket-protocol")).toBe("service.v1");
  sockets.keep(opened);
  expect(await opened.next()).toEqual({ type: "hello", push: true });
  return opened;
}

/** The next frame of `type`, skipping others (a hint may arrive beside an assignment). */
async function nextOf(socket: Socket, type: string, ms = 30_000): Promise<Frame> {
  return waitFor(() => {
    const index = socket.frames.findIndex((frame) => frame.type === type);
    return index >= 0 ? socket.frames.splice(index, 1)[0] : null;
  }, { timeout: ms, interval: 50, message: `a ${type} frame` });
}

function assigned(socket: Socket): Frame[] {
  return socket.frames.filter((frame) => frame.type === "agent-task.assign");
}

describe("the task-worker wake socket", { timeout: 60_000 }, () => {
  it("without credit a new task is announced by app; with credit it is assigned, never beyond the credit", async () => {
    const t = await taskApp();
    const second = await taskApp(taskManifest(), t.human);
    const socket = await wakeSocket(t.key);

    await write(second, "issues", { title: "hint" }, "h");
    expect(await nextOf(socket, "agent-task.available")).toEqual({ type: "agent-task.available", app_id: second.appId });
    expect(assigned(socket)).toEqual([]);
    // The hinted task is still queued: polling claims it.
    const [polled] = await claim(t.key, { max: 1 });
    await json(await ack(t.key, polled.task_id), 200);

    socket.send({ type: "ready", credits: 1 });
    await write(t, "issues", { title: "one" }, "a1");
    await write(t, "issues", { title: "two" }, "a2");
    const first = await nextOf(socket, "agent-task.assign");
    const { type: _type, ...envelope } = first;
    expectEnvelope(envelope as unknown as Envelope);
    expect(envelope).toMatchObject({ app_id: t.appId, collection: "issues" });
    await tasksIn(t, "queued", 1);
    await quietFor(1500);
    expect(assigned(socket)).toEqual([]);

    // Credit is absolute: restating 1 takes the queued task at once.
    socket.send({ type: "ready", credits: 1 });
    const secondAssign = await nextOf(socket, "agent-task.assign");
    expect(new Set([first.row_key, secondAssign.row_key])).toEqual(new Set(["a1", "a2"]));
    // ready 0 spends nothing.
    socket.send({ type: "ready", credits: 0 });
    await write(t, "issues", { title: "three" }, "a3");
    expect(await nextOf(socket, "agent-task.available")).toMatchObject({ app_id: t.appId });
    expect(assigned(socket)).toEqual([]);
    for (const frame of [first, secondAssign]) await json(await ack(t.key, String(frame.task_id)), 200);
  });

  it("a ready with credit claims what is already queued; unknown and malformed frames are ignored or answered", async () => {
    const t = await taskApp();
    await write(t, "issues", { title: "early" }, "e1");
    await write(t, "issues", { title: "early" }, "e2");
    await write(t, "issues", { title: "early" }, "e3");
    await tasksIn(t, "queued", 3);
    const socket = await wakeSocket(t.key);
    socket.send({ type: "future-frame", x: 1 });
    socket.send("not json");
    socket.send({ type: "ready", credits: -1 });
    expect(await nextOf(socket, "error")).toMatchObject({ error: { code: "invalid_request" } });
    socket.send({ type: "ready", credits: 2 });
    await nextOf(socket, "agent-task.assign");
    await nextOf(socket, "agent-task.assign");
    await quietFor(800);
    expect(assigned(socket)).toEqual([]);
    expect((await tasksIn(t, "leased", 2)).length).toBe(2);
  });

  it("a key revoked after the socket opened gets no task: the socket closes", async () => {
    const t = await taskApp();
    await write(t, "issues", { title: "x" }, "x");
    await tasksIn(t, "queued");
    const socket = await wakeSocket(t.key);
    const agentId = (await json<{ agent_id: string }>(await call("/v1/keys", { key: t.key }), 200)).agent_id;
    await json(await call(`/v1/self/agents/${agentId}/revoke-key`, { method: "POST", session: t.human.session }), 200);
    socket.send({ type: "ready", credits: 5 });
    expect((await socket.whenClosed(10_000)).code).toBe(1012);
    expect(assigned(socket)).toEqual([]);
    // The owner (whose key it no longer is) still sees the task queued.
    const { tasks } = await json<{ tasks: Array<{ status: string }> }>(await call(`/v1/apps/${t.appId}/agent-tasks`, { session: t.human.session }), 200);
    expect(tasks.map((task) => task.status)).toEqual(["queued"]);
  });

  it("refuses upgrades without service.v1, with a bad or missing key, from an unclaimed agent, or without Upgrade", async () => {
    const t = await taskApp();
    const refused = async (protocols: string[], status: number, code: Parameters<typeof expectError>[2]) => {
      const opened = await Socket.openAt(STREAM, protocols);
      expect(opened).toBeInstanceOf(Response);
      await expectError(opened as Response, status, code);
    };
    await refused([`service.agentkey.${t.key}`], 400, "invalid_request");
    await refused(["service.v1"], 401, "unauthorized");
    await refused(["service.v1", `service.agentkey.svc_${"0".repeat(32)}`], 401, "invalid_api_key");
    const loose = await register();
    await refused(["service.v1", `service.agentkey.${loose.api_key}`], 403, "agent_not_claimed");
    await expectError(await call("/v1/agent-tasks/stream", { key: t.key }), 400, "invalid_request");
  });
});
