// The local runtime's own port, behind `wrangler dev`'s proxy. wrangler answers on a proxy
// (a workerd process of its own) that forwards every request and socket to the runtime
// serving the Worker. Measured at 1,000 feed sockets, each socket through the proxy held
// about seven descriptors in the proxy (a socket each way and pipes) and one in the
// runtime, so 5,000 sockets do not fit a 20,000 `ulimit -n` through the proxy, and do when
// opened on the runtime's port directly. Found by listing the loopback ports the workerd
// processes under the relay listen on (/proc: Linux only) and asking each, other than the
// proxy's, for the relay's status route.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { workerdPids } from "./soak-probe.mjs";

/** Socket inodes a process holds open. */
function socketInodes(pid) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]);
    } catch { /* closed meanwhile */ }
  }
  return inodes;
}

/** 127.0.0.1 ports in LISTEN state whose socket inode is in `inodes`. */
function listeningLoopbackPorts(inodes) {
  const ports = [];
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 10 || fields[3] !== "0A") continue;
    const [address, port] = fields[1].split(":");
    if (address === "0100007F" && inodes.has(fields[9])) ports.push(parseInt(port, 16));
  }
  return ports;
}

/**
 * The port on which the runtime under the relay process `rootPid` answers the relay
 * directly, or null (not Linux, or no port answered as the relay on `proxyPort` does).
 */
export async function runtimePort(rootPid, proxyPort) {
  let candidates;
  try {
    candidates = workerdPids(rootPid).flatMap((pid) => listeningLoopbackPorts(socketInodes(pid))).filter((port) => port !== proxyPort);
  } catch {
    return null;
  }
  for (const port of candidates) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/auth/status`, { signal: AbortSignal.timeout(3_000) });
      const body = await res.json().catch(() => null);
      if (res.ok && body && typeof body === "object" && "magic_link" in body) return port;
    } catch { /* not this one */ }
  }
  return null;
}
