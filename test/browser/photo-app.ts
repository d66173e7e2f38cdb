// The photo-sharing app two Chromium tests deploy: a public `photos` collection whose rows
// reference attachments, and a page that uploads from a file input (`#pick`), says
// "shared <id>" or "failed <code>" in `#status`, keeps the upload in `window.uploaded`, and
// shows every photo live in `#photos` (as a `?w=` thumbnail when asked).

export function photoManifest(name: string) {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $defs: {
      Photo: {
        type: "object", required: ["image"], additionalProperties: false,
        properties: { image: { type: "string", format: "service-attachment-id" }, caption: { type: "string", maxLength: 200 } },
      },
    },
    "x-service-manifest": {
      app: { name },
      collections: {
        photos: { schema: { $ref: "#/$defs/Photo" }, read: ["anyone"], write: ["anyone"], update: ["owner"], delete: ["owner"], anonWriteBudget: { perIpPerDay: 0, perAppPerDay: 0 } },
      },
    },
  };
}

export function photoPage(title: string, thumbnailWidth?: number): string {
  const suffix = thumbnailWidth === undefined ? "" : `?w=${thumbnailWidth}`;
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head>
<body><input type="file" id="pick" accept="image/*"><p id="status"></p><ul id="photos"></ul>
<script>
  const svc = window.service;
  const render = () => {
    document.getElementById("photos").replaceChildren(...svc.collections.snapshot("photos").map((row) => {
      const li = document.createElement("li");
      const img = document.createElement("img");
      img.src = "/_svc/attachments/" + row.data.image + ${JSON.stringify(suffix)};
      img.alt = row.data.caption || "";
      img.dataset.id = row.data.image;
      li.append(img);
      return li;
    }));
  };
  svc.collections.on("photos", render);
  document.getElementById("pick").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    try {
      const uploaded = await svc.uploadBlob(file, { collection: "photos" });
      window.uploaded = uploaded;
      await svc.collections.create("photos", { image: uploaded.id, caption: file.name });
      document.getElementById("status").textContent = "shared " + uploaded.id;
    } catch (err) {
      document.getElementById("status").textContent = "failed " + err.code;
    }
  });
  svc.ready.then(() => { render(); document.body.dataset.ready = "yes"; });
</script></body></html>`;
}
