/**
 * Files from the page (WIRE §4.2, §4.3): `uploadBlob` posts a File or Blob to
 * `/_svc/attachments` as the viewer (owner or member; a visitor only with
 * `{ collection }` naming a collection anyone may write, images only), `downloadBlob`
 * reads an app attachment's bytes, and `saveBlob` hands them to the browser as a download.
 */
import { refusal, send } from "./store";
import type { ServiceBlobs, UploadedBlob } from "./types";

const path = (id: string) => `/_svc/attachments/${encodeURIComponent(id)}`;

async function fetchBlob(id: string): Promise<Blob> {
  const res = await send("GET", path(id));
  if (!res.ok) throw refusal(res, await res.text());
  return res.blob();
}

export function blobsOf(credentials: Promise<void>): ServiceBlobs {
  return {
    uploadBlob: async (file, opts = {}) => {
      await credentials;
      const form = new FormData();
      const filename = opts.filename ?? (file instanceof File ? file.name : undefined);
      form.set("file", file, filename ?? "attachment");
      if (filename) form.set("filename", filename);
      const query = opts.collection ? `?${new URLSearchParams({ collection: opts.collection }).toString()}` : "";
      const res = await send("POST", `/_svc/attachments${query}`, form);
      const text = await res.text();
      if (!res.ok) throw refusal(res, text);
      const ref = JSON.parse(text) as { attachment_id: string; mime: string; size: number; filename: string | null };
      const uploaded: UploadedBlob = { id: ref.attachment_id, mime: ref.mime, size: ref.size, filename: ref.filename };
      return uploaded;
    },
    downloadBlob: async (id) => {
      await credentials;
      return new Uint8Array(await (await fetchBlob(id)).arrayBuffer());
    },
    saveBlob: async (id, filename) => {
      await credentials;
      const blob = await fetchBlob(id);
      const url = URL.createObjectURL(blob);
      const link = document.createElement("a");
      link.href = url;
      link.download = filename ?? id;
      link.style.display = "none";
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    },
  };
}
