/**
 * Deploy assets given as `{ path, attachment_id }`: the attachment must be live, ready and
 * usable by the deploying agent here (its own agent-scoped one, or one scoped to this very
 * app). Its bytes are copied into the content-addressed asset store at deploy time, so a
 * later delete of the attachment leaves the deployed version serving what it was built with.
 */
import { RelayError } from "../errors";
import { attachmentFor, objectKey } from "../blobs/attachments";
import type { AttachmentResolver } from "./assets";
import type { DeployActor } from "./deploy";

/** A resolver for prepareAssets; `appId` is null while the app is being created. */
export function attachmentResolver(env: Env, actor: DeployActor, appId: string | null): AttachmentResolver {
  return async (attachmentId, field) => {
    const refuse = () => new RelayError("attachment_not_found", `Attachment ${attachmentId.slice(0, 100)} is not one you may deploy here: use your own attachment or one scoped to this app.`, { field });
    let row;
    try {
      row = await attachmentFor(env, actor, attachmentId);
    } catch (err) {
      if (err instanceof RelayError) throw refuse();
      throw err;
    }
    const usable = row.scope === "agent" ? row.ownerAgentId === actor.agentId : appId !== null && row.appId === appId;
    if (!usable) throw refuse();
    const object = await env.BLOBS.get(objectKey(row.id));
    if (!object) throw refuse();
    return { id: row.id, mime: row.mime, sha256: row.sha256, bytes: new Uint8Array(await object.arrayBuffer()) };
  };
}
