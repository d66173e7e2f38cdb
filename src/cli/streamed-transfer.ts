// Streaming a file to or from the relay in one request, for the bodies too large to hold
// whole: `service apps export` writes the archive as it arrives and `service apps import`
// sends the file as it is read. Speaks node:http like http.ts (same headers, same error
// envelope), with an idle timeout instead of a total one, and reports progress on stderr
// only when stderr is a terminal, like the uploader: output meant for programs stays clean.
import { createReadStream } from "node:fs";
import { Transform, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { errorFromResponse, fetchError, type Auth, type RelayClient } from "./http.ts";

/** A transfer that moves no byte for this long has failed. */
const IDLE_TIMEOUT_MS = 120_000;
const PROGRESS_EVERY_BYTES = 256 * 1024;

/** Counts the bytes passing through and shows how far it got (a terminal only). */
function meter(label: string, total: number | null): { counter: Transform; bytes: () => number } {
  let seen = 0;
  let shown = 0;
  const show = process.stderr.isTTY === true;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.byteLength;
      if (show && seen - shown >= PROGRESS_EVERY_BYTES) {
        shown = seen;
        process.stderr.write(`\r${label}: ${total ? `${Math.floor((seen * 100) / total)}%` : `${seen} bytes`}`);
      }
      done(null, chunk);
    },
    flush(done) {
      if (show) process.stderr.write(`\r${label}: ${seen} bytes\n`);
      done();
    },
  });
  return { counter, bytes: () => seen };
}

export interface Transfer {
  auth: Auth;
  /** Progress label, e.g. the file name. */
  label: string;
  /** A file sent as the request body. */
  upload?: { file: string; size: number; contentType: string };
  /** Where a 2xx answer's body goes; without it the answer is read as text. */
  download?: Writable;
}

export interface TransferAnswer {
  status: number;
  /** The answer's text when it was not downloaded. */
  text: string;
  /** Bytes written to `download`. */
  bytes: number;
}

/** One streamed exchange; a non-2xx answer is thrown as the relay's error. */
export async function streamedExchange(relay: RelayClient, method: string, path: string, transfer: Transfer): Promise<TransferAnswer> {
  const url = new URL(`${relay.baseUrl}${path}`);
  const { request } = url.protocol === "https:" ? await import("node:https") : await import("node:http");
  const headers = relay.baseHeaders({ auth: transfer.auth });
  if (transfer.upload) {
    headers["content-type"] = transfer.upload.contentType;
    headers["content-length"] = String(transfer.upload.size);
  }
  try {
    return await new Promise<TransferAnswer>((resolve, reject) => {
      const req = request(url, { method, headers }, (res) => {
        const status = res.statusCode ?? 0;
        res.setTimeout(IDLE_TIMEOUT_MS, () => res.destroy(Object.assign(new Error("the transfer stalled"), { name: "TimeoutError" })));
        if (status >= 200 && status < 300 && transfer.download) {
          const { counter, bytes } = meter(transfer.label, Number(res.headers["content-length"]) || null);
          pipeline(res, counter, transfer.download).then(() => resolve({ status, text: "", bytes: bytes() }), reject);
          return;
        }
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          if (status < 200 || status > 299) reject(errorFromResponse({ status, headers: { get: (name) => [res.headers[name.toLowerCase()]].flat().join(", ") || null }, text }));
          else resolve({ status, text, bytes: 0 });
        });
        res.on("error", reject);
      });
      req.setTimeout(IDLE_TIMEOUT_MS, () => req.destroy(Object.assign(new Error("the transfer stalled"), { name: "TimeoutError" })));
      req.on("error", reject);
      if (!transfer.upload) {
        req.end();
        return;
      }
      const { counter } = meter(transfer.label, transfer.upload.size);
      pipeline(createReadStream(transfer.upload.file), counter, req).catch(reject);
    });
  } catch (err) {
    if (err instanceof Error && err.name === "CliError") throw err;
    throw fetchError(url.toString(), err);
  }
}
