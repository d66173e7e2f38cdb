// The small pieces every loopback stand-in server in the tests needs (the webhook
// receiver, the fake oauth2 provider, the fake OpenID issuer): reading a request body,
// answering JSON, escaping a value for an HTML attribute, and a loopback server that
// routes "METHOD /path" to handlers.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  response.end(JSON.stringify(body));
}

export function escapeAttribute(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** Handles one request; `url` is the request's URL, parsed. */
export type StandInHandler = (request: IncomingMessage, response: ServerResponse, url: URL) => void | Promise<void>;

export interface StandInServer {
  origin: string;
  close(): Promise<void>;
}

/**
 * Starts a stand-in server on 127.0.0.1 (a free port) that answers `routes`, keyed
 * "METHOD /path"; anything else goes to `otherwise` (404 by default). A handler that
 * throws answers 500 `{ error: "server_error" }`, as a real provider would.
 */
export async function serveOnLoopback(routes: Record<string, StandInHandler>, otherwise?: StandInHandler): Promise<StandInServer> {
  const notFound: StandInHandler = (_request, response) => {
    response.writeHead(404);
    response.end();
  };
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const handler = routes[`${request.method} ${url.pathname}`] ?? otherwise ?? notFound;
    Promise.resolve().then(() => handler(request, response, url)).catch(() => sendJson(response, 500, { error: "server_error" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
