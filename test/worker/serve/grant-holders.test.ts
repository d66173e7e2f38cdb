// A grant-link holder on the app origin: the `grh_` bearer (from POST /_svc/grant) opens
// the document of private and link apps, `GET /_svc/session` answers it as anonymous with
// `grant: { role, holderId }`, the feed socket takes it as `service.grant.<token>`, and
// once the link is revoked the same credential gets 401 (`grant_invalid` on the session).
import { describe, expect, it } from "vitest";
import { expectError, json } from "../helpers";
import { appCall } from "./helpers";
import { setup } from "../access/fixtures";
import { Socket } from "../live/helpers";

async function holder(visibility: string) {
  const app = await setup(undefined, visibility);
  const link = await app.mintGrant({ role: "guest" });
  const grant = /#g=(gr_[0-9a-f]{32})$/.exec(link.grant_url)![1];
  const { token, holder_id } = await json<{ token: string; holder_id: string }>(await appCall(app.slug, "/_svc/grant", { json: { grant } }), 200);
  return { app, link, token, holderId: holder_id };
}

describe("a grant holder on the app origin", () => {
  for (const visibility of ["private", "link"]) {
    it(`opens the ${visibility} app's document and is an anonymous session carrying the role`, async () => {
      const { app, token, holderId } = await holder(visibility);
      const doc = await appCall(app.slug, "/", { token });
      expect(doc.status).toBe(200);
      expect(await doc.text()).toContain("<p>access</p>");
      const session = await json<Record<string, unknown>>(await appCall(app.slug, "/_svc/session", { token }), 200);
      expect(session).toMatchObject({ kind: "anonymous", humanId: null, visitorId: null, grant: { role: "guest", holderId } });
    });
  }

  it("opens the feed socket as service.grant.<token>", async () => {
    const { app, token } = await holder("private");
    const socket = await Socket.connect(app.slug, ["service.v1", `service.grant.${token}`]);
    const hello = await socket.next();
    expect(hello).toMatchObject({ type: "hello", session: { kind: "anonymous", humanId: null } });
    socket.close();
  });

  it("is refused once the link is revoked", async () => {
    const { app, link, token } = await holder("private");
    expect((await app.call(`${app.grants}/${link.id}`, { method: "DELETE" })).status).toBe(200);
    expect((await appCall(app.slug, "/", { token })).status).toBe(401);
    await expectError(await appCall(app.slug, "/_svc/session", { token }), 401, "grant_invalid");
  });

  it("others' session answers carry no grant field", async () => {
    const { app } = await holder("public");
    const anonymous = await json<Record<string, unknown>>(await appCall(app.slug, "/_svc/session", {}), 200);
    expect(anonymous.kind).toBe("anonymous");
    expect(anonymous).not.toHaveProperty("grant");
  });
});
