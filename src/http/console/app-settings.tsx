/**
 * Who can open an app, in the console: the visibility section of the app's page and its
 * two forms, changing the visibility and rotating a link app's share link. Both act
 * through the same functions as `PATCH /v1/apps/:id` and `POST …/share-link/rotate`
 * (src/apps/settings.ts). A share link is shown only on the page answering the post that
 * made it (never in a redirect, so it never sits in a URL or the history); a change that
 * makes none redirects back to the app's page with a flash.
 */
import * as z from "zod";
import type { AppRow, Visibility } from "../../db/apps";
import { changeAppSettings, rotateShareLink, VISIBILITIES } from "../../apps/settings";
import { parseWith } from "../routes";
import { requireLive } from "../v1/app-access";
import type { AppContext } from "../types";
import { Secret } from "./app-access-view";
import { appPath, ownerAppRoute } from "./owner-app";
import { readForm, renderPage, seeOther } from "./page";
import type { PageRoute } from "./routes";

export const VISIBILITY_WORDS: Record<Visibility, string> = {
  private: "Private: only you, your members and grant-link holders can open it.",
  link: "Link: anyone with the share link can open it.",
  public: "Public: anyone can open it.",
};

export function VisibilitySection({ app }: { app: AppRow }) {
  return (
    <section aria-labelledby="visibility-heading">
      <h2 id="visibility-heading">Who can open it</h2>
      <p id="visibility" data-visibility={app.visibility}>Now <strong>{app.visibility}</strong>. Choose who may open it:</p>
      <form method="post" action={appPath(app, "/visibility")}>
        <fieldset>
          <legend class="vh">Visibility</legend>
          {VISIBILITIES.map((v) => (
            <div class="choice">
              <input type="radio" name="visibility" value={v} id={`visibility-${v}`} checked={v === app.visibility} />{" "}
              <label for={`visibility-${v}`}>{VISIBILITY_WORDS[v]}</label>
            </div>
          ))}
        </fieldset>
        <p class="muted">Changing it makes every open page of the app reconnect. Choosing Link makes a new share link, shown once.</p>
        <button type="submit" id="change-visibility">Change visibility</button>
      </form>
      {app.visibility === "link" ? (
        <form method="post" action={appPath(app, "/share-link/rotate")} class="spaced">
          <p>The share link was shown when it was made. A new one replaces it: the old link stops working at once.</p>
          <button type="submit" class="danger" id="rotate-share-link">Make a new share link</button>
        </form>
      ) : null}
    </section>
  );
}

function sharePage(c: AppContext, app: AppRow, what: string, url: string): Response | Promise<Response> {
  return renderPage(c, 200, `Share link of ${app.slug}`, (
    <Secret app={app} what={what} value={url} back={appPath(app)}
      note="Send it to the people who should open the app; anyone holding it can." />
  ));
}

const visibilityForm = z.object({ visibility: z.enum(VISIBILITIES) });

async function changeVisibility(c: AppContext, target: AppRow): Promise<Response> {
  const app = requireLive(target);
  const { visibility } = parseWith(visibilityForm, { visibility: (await readForm(c)).get("visibility") ?? undefined }, "body");
  const { shareUrl } = await changeAppSettings(c.env, app, { visibility });
  if (shareUrl) return sharePage(c, app, `${app.slug} is now a link app.`, shareUrl);
  return seeOther(c, `${appPath(app)}?flash=visibility`);
}

async function rotate(c: AppContext, target: AppRow): Promise<Response> {
  const app = requireLive(target);
  return sharePage(c, app, `Made a new share link for ${app.slug}; the old one no longer works.`, await rotateShareLink(c.env, app));
}

export function appSettingsPages(route: PageRoute): void {
  route("post", "/console/apps/:id/visibility", ownerAppRoute(changeVisibility));
  route("post", "/console/apps/:id/share-link/rotate", ownerAppRoute(rotate));
}
