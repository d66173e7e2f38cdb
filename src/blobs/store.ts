/**
 * Content-addressed bytes in R2: every document and asset is stored under its sha256, so
 * a redeploy that keeps a file stores nothing new and two apps sharing a file share its
 * bytes. Objects are immutable; nothing here deletes (purge sweeps unreferenced keys).
 */

export type BlobKind = "doc" | "asset";

export async function sha256Bytes(bytes: ArrayBuffer | Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export function blobKey(kind: BlobKind, sha256: string): string {
  return `${kind}/${sha256}`;
}

/** Stores the bytes unless an object with the same hash exists; returns the hash. */
export async function putContentAddressed(
  bucket: R2Bucket,
  kind: BlobKind,
  bytes: Uint8Array,
  contentType: string,
  knownSha256?: string,
): Promise<{ sha256: string; stored: boolean }> {
  const sha256 = knownSha256 ?? (await sha256Bytes(bytes));
  const key = blobKey(kind, sha256);
  if (await bucket.head(key)) return { sha256, stored: false };
  await bucket.put(key, bytes, { httpMetadata: { contentType }, sha256 });
  return { sha256, stored: true };
}

export async function getBlob(bucket: R2Bucket, kind: BlobKind, sha256: string, range?: R2Range): Promise<R2ObjectBody | null> {
  return bucket.get(blobKey(kind, sha256), range ? { range } : undefined);
}
