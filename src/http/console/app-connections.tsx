/**
 * The connections section of an owned app's console page (WIRE §2.6): every outbound
 * connection of the app with its name, kind, status, the one host it may be sent to and
 * its secret's fingerprint (never the secret), and for an oauth2 connection still waiting
 * for consent (`pending_auth`) or whose provider refused a refresh (`needs_reauth`) the
 * link that takes the owner through the provider's consent again. Connections are made by
 * the app's agent (`service connections create`) or the app's own settings page
 * (`service.connections.set`); the console only shows them.
 */
import type { ConnectionView } from "../../connections/manage";

const STATUS_WORDS: Record<ConnectionView["status"], string> = {
  active: "active",
  pending_auth: "waiting for your consent",
  needs_reauth: "needs your consent again",
};

export function ConnectionsSection({ connections, authorizeUrl }: { connections: ConnectionView[]; authorizeUrl: (name: string) => string }) {
  return (
    <section aria-labelledby="connections-heading">
      <h2 id="connections-heading">Connections</h2>
      {connections.length ? (
        <table id="connections">
          <thead><tr>
            <th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Sent only to</th><th scope="col">Secret fingerprint</th>
          </tr></thead>
          <tbody>{connections.map((conn) => (
            <tr data-connection={conn.name}>
              <th scope="row"><code>{conn.name}</code>{conn.label ? <span class="muted"> ({conn.label})</span> : null}</th>
              <td data-field="kind">{conn.kind}</td>
              <td data-field="status">
                {STATUS_WORDS[conn.status]}
                {conn.kind === "oauth2" && conn.status !== "active"
                  ? <> <a href={authorizeUrl(conn.name)} data-authorize={conn.name}>Authorize<span class="vh"> {conn.name}</span></a></>
                  : null}
              </td>
              <td data-field="allowed-host"><code>{conn.allowedHost}</code></td>
              <td data-field="fingerprint"><code>{conn.secretFingerprint}</code></td>
            </tr>
          ))}</tbody>
        </table>
      ) : <p id="no-connections">This app has no connections. Its agent creates them with <code>service connections create</code>.</p>}
    </section>
  );
}
