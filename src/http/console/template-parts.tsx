/**
 * Pieces of a community template that both the gallery's template page and the operator's
 * submission page show: what its manifest lets it do (the same disclosure an app's own
 * page shows, read from the snapshot's manifest), the hosts it can reach, its setup steps,
 * its example rows and its star rating. Pure views; the pages fetch.
 */
import type { Config } from "../../config";
import { compile } from "../../apps/deploy";
import { disclosure, type Disclosure } from "../../manifest";
import type { ExternalDestination, SeedRows, SetupStep } from "../../community/snapshots";

/** The snapshot's manifest as an app's disclosure; null when it no longer compiles under today's limits. */
export function templateDisclosure(manifest: Record<string, unknown>, cfg: Config): Disclosure | null {
  try {
    return disclosure(compile(manifest, cfg, "private", null));
  } catch {
    return null;
  }
}

/** The collections a template asks for, who may do what in each, and every other thing it may do. */
export function WhatItAsks({ told }: { told: Disclosure | null }) {
  if (!told) return <p class="note" id="permissions-unreadable">This template's manifest no longer fits this relay's limits, so its permissions cannot be shown.</p>;
  return (
    <section aria-labelledby="permissions-heading">
      <h2 id="permissions-heading">What it asks for</h2>
      {told.collections.length ? (
        <table id="template-collections">
          <thead><tr><th scope="col">Collection</th><th scope="col">Read by</th><th scope="col">Created by</th><th scope="col">Updated by</th><th scope="col">Deleted by</th></tr></thead>
          <tbody>{told.collections.map((col) => (
            <tr data-collection={col.name}>
              <th scope="row"><code>{col.name}</code>{col.append_only ? <span class="muted"> (append-only)</span> : null}</th>
              <td>{col.read.join(", ") || "nobody"}</td>
              <td>{col.write.join(", ") || "nobody"}</td>
              <td>{col.update.join(", ") || "nobody"}</td>
              <td>{col.delete.join(", ") || "nobody"}</td>
            </tr>
          ))}</tbody>
        </table>
      ) : <p>No collections.</p>}
      <ul id="template-disclosure">{told.lines.map((line) => <li>{line}</li>)}</ul>
    </section>
  );
}

function destinationText(destination: ExternalDestination): string {
  const host = destination.host === "*" ? "a host the installer chooses" : destination.host;
  const how = destination.fromSetting ? ` (from the setting "${destination.fromSetting}")` : destination.viaConnection ? ` (through the connection "${destination.viaConnection}")` : "";
  return `${destination.kind}: ${host}${how}`;
}

export function Destinations({ list }: { list: ExternalDestination[] }) {
  return (
    <section aria-labelledby="destinations-heading">
      <h2 id="destinations-heading">Where its data can go</h2>
      {list.length
        ? <ul id="destinations">{list.map((destination) => <li data-kind={destination.kind}>{destinationText(destination)}</li>)}</ul>
        : <p id="no-destinations">Nowhere outside the relay: no webhooks, embeds or fetches.</p>}
    </section>
  );
}

export function SetupSteps({ steps }: { steps: SetupStep[] }) {
  return (
    <section aria-labelledby="steps-heading">
      <h2 id="steps-heading">Setup steps</h2>
      {steps.length ? (
        <ol id="setup-steps">{steps.map((step) => (
          <li data-step-kind={step.kind}>
            <strong>{step.label}</strong> <span class="muted">({step.kind}{step.required ? ", required" : ""}{step.secret ? ", secret" : ""})</span>
            {step.description ? <p>{step.description}</p> : null}
          </li>
        ))}</ol>
      ) : <p id="no-setup-steps">None: it works as installed.</p>}
    </section>
  );
}

export function SeedRowsView({ rows }: { rows: SeedRows }) {
  const collections = Object.entries(rows);
  return (
    <section aria-labelledby="seed-heading">
      <h2 id="seed-heading">Example rows</h2>
      {collections.length ? collections.map(([collection, list]) => (
        <div data-seed-collection={collection}>
          <h3><code>{collection}</code> <span class="muted">({list.length} rows)</span></h3>
          <table class="records">
            <thead><tr><th scope="col">Key</th><th scope="col">Data</th></tr></thead>
            <tbody>{list.map((row) => <tr data-seed-key={row.key}><th scope="row"><code>{row.key}</code></th><td><code class="data">{JSON.stringify(row.data)}</code></td></tr>)}</tbody>
          </table>
        </div>
      )) : <p id="no-seed-rows">No example rows: the app starts empty.</p>}
    </section>
  );
}

/** "4.5 ★ (2 reviews)", or "No reviews yet". */
export function ratingText(rating: number | null, count: number): string {
  if (rating === null) return "No reviews yet";
  return `${rating} ★ (${count} ${count === 1 ? "review" : "reviews"})`;
}

/** A review's stars, drawn and spelled out for screen readers. */
export function Stars({ stars }: { stars: number }) {
  return <><strong aria-hidden="true">{"★".repeat(stars)}{"☆".repeat(5 - stars)}</strong> <span class="vh">{stars} of 5 stars</span></>;
}
