// The local runtime's own port, behind `wrangler dev`'s proxy. wrangler answers on a proxy
// (a workerd process of its own) that forwards every request and socket to the runtime
// serving the Worker. Measured at 1,000 feed sockets, each socket through the proxy held
// about seven descriptors in the proxy (a socket each way and pipes) and one in the
// runtime, so 5,000 sockets do not fit a 20,000 `ulimit -n` through the proxy, and do when
// opened on the runtime's port directly. Found by listing the loopback ports the workerd
// processes under the Worker's wrangler listen on (/proc: Linux only) and asking each,
// other than the proxy's, what the proxy answers.
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
 * The port on which the runtime under the Worker process `rootPid` answers directly: the
 * one, other than the proxy's, that answers GET `probePath` with 200 and the same body as
 * the proxy does. Null when there is none (not Linux, or nothing answered alike).
 */
export async function runtimePort(rootPid, proxyPort, probePath) {
  const answer = async (port) => {
    try {
      const res = await fetch(`http://127.0.0.1:${port}${probePath}`, { signal: AbortSignal.timeout(3_000) });
      return res.ok ? await res.text() : null;
    } catch {
      return null;
    }
  };
  let candidates;
  try {
    candidates = workerdPids(rootPid).flatMap((pid) => listeningLoopbackPorts(socketInodes(pid))).filter((port) => port !== proxyPort);
  } catch {
    return null;
  }
  const expected = await answer(proxyPort);
  if (expected === null) return null;
  for (const port of candidates) if ((await answer(port)) === expected) return port;
  return null;
}
