/**
 * Minting a claim code from the console. The code is a secret shown exactly once, so the
 * page is the direct answer to the form post (no redirect that would put it in a URL or
 * the history) and is never cached. The person hands the command to their agent.
 */
import { mintClaimCode } from "../../db/codes";
import type { AppContext } from "../types";
import { When } from "./layout";
import { currentHuman, renderPage, toSignIn } from "./page";
import type { PageRoute } from "./routes";

async function mint(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, "/");
  const minted = await mintClaimCode(c.env, human.humanId);
  return renderPage(c, 201, "Your claim code", (
    <>
      <p>Give this code to your agent. It is shown only now, works once, and expires at{" "}
        <span id="claim-code-expires"><When iso={minted.expiresAt} /></span>.</p>
      <p><code class="secret" id="claim-code">{minted.code}</code></p>
      <p>Your agent runs:</p>
      <pre><code id="claim-command">{`service agent claim ${minted.code}`}</code></pre>
      <p>Once it has, the agent appears in <a href="/">your console</a>.</p>
    </>
  ));
}

export function claimCodePages(route: PageRoute): void {
  route("post", "/console/claim-codes", mint);
}
