/**
 * The community template gallery in the console: every approved, listed template (title,
 * publisher handle, description, category, tags, rating, installs), a template's page
 * (its brand card, what its manifest asks for, where its data can go, setup steps,
 * reviews) and the install form built from its config contract. The API installs with an
 * agent key; here the signed-in person installs for themselves, naming which of their
 * agents the install is recorded under, through the same install function.
 */
import { agentsOfHuman, type AgentRow } from "../../db/agents";
import { config } from "../../config";
import { RelayError } from "../../errors";
import { brandCard } from "../../apps/screenshot";
import { configSteps, type ConfigStep } from "../../community/config-contract";
import { installTemplate, listedSnapshot } from "../../community/install";
import { publisherByHandle, snapshotContent, type SnapshotRow } from "../../community/snapshots";
import { countTemplateEvent } from "../../community/stats";
import { galleryEntries, templateStats, visibleReviews, type GalleryEntry, type TemplateReview } from "../../community/console-gallery";
import type { AppContext, HumanCaller } from "../types";
import { Alert, When } from "./layout";
import { appPath } from "./owner-app";
import { currentHuman, readForm, renderPage, seeOther, toSignIn } from "./page";
import type { PageRoute } from "./routes";
import { Destinations, ratingText, SetupSteps, Stars, templateDisclosure, WhatItAsks } from "./template-parts";

const MAX_QUERY_CHARS = 100;
/** Config answers arrive as `config.<step key>` form fields. */
const CONFIG_FIELD_PREFIX = "config.";

export function templatePath(handle: string, slug: string, suffix = ""): string {
  return `/console/gallery/${encodeURIComponent(handle)}/${encodeURIComponent(slug)}${suffix}`;
}

function queryText(c: AppContext, name: string): string {
  return (c.req.query(name) ?? "").slice(0, MAX_QUERY_CHARS);
}

function GalleryList({ entries }: { entries: GalleryEntry[] }) {
  if (!entries.length) return <p id="no-templates">No templates match.</p>;
  return (
    <ul id="templates" class="plain">{entries.map((entry) => (
      <li data-template={`${entry.handle}/${entry.slug}`} class="spaced">
        <h2><a href={templatePath(entry.handle, entry.slug)}>{entry.snapshot.title}</a></h2>
        <p class="muted">by <span data-field="publisher">@{entry.handle}</span> · version {entry.snapshot.version}
          {entry.snapshot.category ? <> · <span data-field="category">{entry.snapshot.category}</span></> : null}</p>
        {entry.snapshot.description ? <p data-field="description">{entry.snapshot.description}</p> : null}
        {entry.tags.length ? <p data-field="tags">{entry.tags.map((tag) => <code>{tag}</code>).reduce<unknown[]>((all, tag) => (all.length ? [...all, " ", tag] : [tag]), [])}</p> : null}
        <p><span data-field="rating">{ratingText(entry.rating, entry.ratingCount)}</span> · <span data-field="installs">{entry.installCount} {entry.installCount === 1 ? "install" : "installs"}</span></p>
      </li>
    ))}</ul>
  );
}

async function gallery(c: AppContext): Promise<Response> {
  await currentHuman(c);
  const search = queryText(c, "q");
  const category = queryText(c, "category");
  const entries = await galleryEntries(c.env, { search, category });
  return renderPage(c, 200, "Template gallery", (
    <>
      <p>Apps other people's agents published and an operator approved. Install one to get your own copy, with its example rows.</p>
      <form method="get" action="/console/gallery" class="actions" role="search">
        <label for="gallery-q" class="vh">Search templates</label>
        <input type="text" id="gallery-q" name="q" value={search} placeholder="Search title, tags, publisher" />
        <label for="gallery-category" class="vh">Category</label>
        <input type="text" id="gallery-category" name="category" value={category} placeholder="Category" />
        <button type="submit">Search</button>
      </form>
      <GalleryList entries={entries} />
    </>
  ));
}

/** Agents the person may record an install under: their own, unless paused. */
async function installingAgents(env: Env, humanId: string): Promise<AgentRow[]> {
  return (await agentsOfHuman(env, humanId)).filter((agent) => agent.pausedAt === null);
}

function StepField({ step, value }: { step: ConfigStep; value: string }) {
  const id = `config-${step.key}`;
  const name = `${CONFIG_FIELD_PREFIX}${step.key}`;
  const hint = [step.description, step.value_hint, step.kind === "upload" ? "the id of a file your agent uploaded (service attachment upload)" : undefined].filter(Boolean).join(" · ");
  return (
    <div class="field" data-step={step.key}>
      <label for={id}>{step.label}{step.required ? " (required)" : ""}</label>
      {step.choices ? (
        <select id={id} name={name}>
          {step.required ? null : <option value="">(none)</option>}
          {step.choices.map((choice) => <option value={choice} selected={choice === (value || step.default)}>{choice}</option>)}
        </select>
      ) : (
        <input type={step.secret ? "password" : "text"} id={id} name={name} value={step.secret ? "" : value || step.default || ""} required={step.required} class="wide" autocomplete="off" />
      )}
      {hint ? <p class="muted">{hint}</p> : null}
    </div>
  );
}

interface InstallFormState {
  human: HumanCaller | null;
  agents: AgentRow[];
  answers: Record<string, string>;
  error: string | null;
}

function InstallSection({ handle, slug, steps, state, returnTo }: { handle: string; slug: string; steps: ConfigStep[]; state: InstallFormState; returnTo: string }) {
  const cli = `service template install ${handle}/${slug}${steps.length ? " --config answers.json" : ""}`;
  return (
    <section aria-labelledby="install-heading">
      <h2 id="install-heading">Install</h2>
      <Alert text={state.error} />
      {!state.human ? (
        <p id="install-sign-in"><a href={`/signin?return_to=${encodeURIComponent(returnTo)}`}>Sign in</a> to install this template, or let your agent run <code>{cli}</code>.</p>
      ) : !state.agents.length ? (
        <p id="install-needs-agent" class="note">An install is recorded under one of your agents, and you have none that is active. Connect an agent from <a href="/">Agents</a>, or let it run <code>{cli}</code>.</p>
      ) : (
        <form method="post" action={templatePath(handle, slug, "/install")} id="install-form">
          <p>You get a new private app of your own with the template's example rows. Your agent can install it too: <code>{cli}</code>.</p>
          {steps.map((step) => <StepField step={step} value={state.answers[step.key] ?? ""} />)}
          {state.agents.length === 1 ? <input type="hidden" name="agent_id" value={state.agents[0].id} /> : (
            <div class="field">
              <label for="install-agent">Record the install under</label>
              <select id="install-agent" name="agent_id">{state.agents.map((agent) => <option value={agent.id}>{agent.name ?? agent.id}</option>)}</select>
            </div>
          )}
          <button type="submit" class="primary" id="install">Install</button>
        </form>
      )}
    </section>
  );
}

function Reviews({ reviews }: { reviews: TemplateReview[] }) {
  return (
    <section aria-labelledby="reviews-heading">
      <h2 id="reviews-heading">Reviews</h2>
      {reviews.length ? (
        <ul id="reviews">{reviews.map((review) => (
          <li data-review-id={review.id} data-stars={review.stars}>
            <p><Stars stars={review.stars} /> <When iso={review.createdAt} /></p>
            {review.body ? <p>{review.body}</p> : null}
            {review.publisherResponse ? <p class="note" data-field="response">Publisher's response: {review.publisherResponse}</p> : null}
          </li>
        ))}</ul>
      ) : <p id="no-reviews">No reviews yet. Installers can leave one with <code>service review</code>.</p>}
    </section>
  );
}

async function templatePage(c: AppContext, snapshot: SnapshotRow, handle: string, state: InstallFormState, status = 200): Promise<Response> {
  const slug = snapshot.slug!;
  const content = snapshotContent(snapshot);
  const [stats, reviews] = await Promise.all([templateStats(c.env, snapshot.publisherHumanId, slug), visibleReviews(c.env, snapshot.publisherHumanId, slug)]);
  const here = templatePath(handle, slug);
  return renderPage(c, status, snapshot.title, (
    <>
      <p class="muted">by @{handle} · version <span id="template-version">{snapshot.version}</span> · <span id="template-rating">{ratingText(stats.rating, stats.ratingCount)}</span> · <span id="template-installs">{stats.installCount} installs</span></p>
      <img src={templatePath(handle, slug, "/card.png")} alt={`Preview card of ${snapshot.name}`} width={640} height={360} id="template-card" style="max-width: 100%; height: auto" />
      {snapshot.description ? <p id="template-description">{snapshot.description}</p> : null}
      {snapshot.longDescription ? <p id="template-long-description" style="white-space: pre-wrap">{snapshot.longDescription}</p> : null}
      {snapshot.changelog ? <p id="template-changelog"><strong>What changed in {snapshot.version}:</strong> {snapshot.changelog}</p> : null}
      <p><a href="/console/gallery">All templates</a></p>
      <InstallSection handle={handle} slug={slug} steps={configSteps(content.setupSteps)} state={state} returnTo={here} />
      <WhatItAsks told={templateDisclosure(content.manifest, config(c.env))} />
      <Destinations list={content.externalDestinations} />
      <SetupSteps steps={content.setupSteps} />
      <Reviews reviews={reviews} />
    </>
  ));
}

/** The listed template named by the path, with its publisher's handle as stored. */
async function namedTemplate(c: AppContext): Promise<{ snapshot: SnapshotRow; handle: string }> {
  const snapshot = await listedSnapshot(c.env, { handle: c.req.param("handle")!, slug: c.req.param("slug")! });
  const publisher = await publisherByHandle(c.env, c.req.param("handle")!);
  return { snapshot, handle: publisher!.handle! };
}

async function showTemplate(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  const { snapshot, handle } = await namedTemplate(c);
  await countTemplateEvent(c.env, snapshot, { views: 1 });
  const agents = human ? await installingAgents(c.env, human.humanId) : [];
  return templatePage(c, snapshot, handle, { human, agents, answers: {}, error: null });
}

async function templateCard(c: AppContext): Promise<Response> {
  const { snapshot } = await namedTemplate(c);
  const bytes = await brandCard(snapshot.name, "card");
  return new Response(bytes, { headers: { "Content-Type": "image/png", "Cache-Control": "public, max-age=300", "X-Content-Type-Options": "nosniff" } });
}

/** The posted `config.<key>` fields, blanks left out (a blank answer means "not given"). */
function postedAnswers(form: URLSearchParams): Record<string, string> {
  const answers: Record<string, string> = {};
  for (const [name, value] of form) {
    if (name.startsWith(CONFIG_FIELD_PREFIX) && value !== "") answers[name.slice(CONFIG_FIELD_PREFIX.length)] = value;
  }
  return answers;
}

async function install(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, templatePath(c.req.param("handle")!, c.req.param("slug")!));
  const { snapshot, handle } = await namedTemplate(c);
  const form = await readForm(c);
  const agents = await installingAgents(c.env, human.humanId);
  const answers = postedAnswers(form);
  const agent = agents.find((candidate) => candidate.id === form.get("agent_id"));
  try {
    if (!agent) throw new RelayError("invalid_request", "Choose one of your active agents to record the install under.", { field: "agent_id" });
    const installed = await installTemplate(c.env, { agentId: agent.id, ownerHumanId: human.humanId }, { handle, slug: snapshot.slug! }, answers);
    return seeOther(c, appPath({ id: installed.app_id }));
  } catch (err) {
    if (!(err instanceof RelayError) || err.status >= 500) throw err;
    return templatePage(c, snapshot, handle, { human, agents, answers, error: err.message }, err.status);
  }
}

export function galleryPages(route: PageRoute): void {
  route("get", "/console/gallery", gallery);
  route("get", "/console/gallery/:handle/:slug", showTemplate);
  route("get", "/console/gallery/:handle/:slug/card.png", templateCard);
  route("post", "/console/gallery/:handle/:slug/install", install);
}
