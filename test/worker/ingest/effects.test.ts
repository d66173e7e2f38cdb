// An accepted delivery is a write like any other (spec B "Suppression and emission" 3): its
// row reaches an open feed socket at once, a notify rule mails the owner, and an outbound webhook rule that
// admits hook-authored writes (machineAuthorKinds) delivers it to a receiver on 127.0.0.1,
// all through the real outbox → queue → consumer path.
import { describe, expect, inject, it } from "vitest";
import { json } from "../helpers";
import { waitFor } from "../../support/wait";
import type { ReceivedRequest } from "../../support/webhook-receiver-types";
import { mailsTo } from "../effects/notify-fixtures";
import { Socket, agentProtocols } from "../live/helpers";
import { deployIngest, post } from "./fixtures";

const receiver = inject("webhookReceiver");

describe("inbound deliveries flow like any write", { timeout: 60_000 }, () => {
  it("an open socket gets the entry at once, notify mails the owner and an outbound webhook carries the row authored by the hook", async () => {
    const inbox = `in-${crypto.randomUUID().slice(0, 8)}`;
    const t = await deployIngest([{ name: "gh", collection: "issues", map: { title: "issue.title" } }], {
      notify: [{ on: "create", collection: "issues", to: ["owner"], channels: ["email"], subject: "Issue: {{title}}", body: "{{title}}" }],
      webhooks: [{ on: "create", collection: "issues", url: `${receiver}/hook/${inbox}`, machineAuthorKinds: ["hook"] }],
    });
    const { socket } = await Socket.subscribed(t.slug, agentProtocols(t.key));
    await json(await post((await t.hook("gh")).url, { issue: { title: "From outside" } }), 200);
    expect(await socket.next()).toMatchObject({ type: "entry", entry: { op: "create", collection_name: "issues", data: { title: "From outside" }, author: { kind: "hook", id: "gh" } } });
    socket.ws.close(1000);
    const [mail] = await waitFor(async () => {
      const mails = await mailsTo(t.human.email);
      return mails.length ? mails : null;
    }, { timeout: 30_000, interval: 100, message: "the notify mail" });
    expect(mail.subject).toBe("Issue: From outside");
    const [request] = await waitFor(async () => {
      const log = (await (await fetch(`${receiver}/log/${inbox}`)).json()) as ReceivedRequest[];
      return log.length ? log : null;
    }, { timeout: 30_000, interval: 100, message: "the outbound webhook" });
    const body = JSON.parse(request.body) as { row: { data: unknown; author: unknown } };
    expect(body.row).toMatchObject({ data: { title: "From outside" }, author: { kind: "hook", id: "gh" } });
  });
});
