import { readFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, request } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir } from "../helpers/tempDir";
import { chromiumPath, type RunningExplore, startExplore } from "./exploreProcess";
import { writeFixtureSnapshot } from "./fixtureSnapshot";

// The review page in a real browser (Debian's chromium, driven by playwright-core) against the
// built command line's `explore`, on two generated BlackLine snapshots. EXPLORE_SCREENSHOTS=DIR
// also saves a 1280x800 picture of each tab there (how docs/*.png are made).
const screenshots = process.env.EXPLORE_SCREENSHOTS;

let dir: string;
let explore: RunningExplore;
let browser: Browser;
let page: Page;

/** A raw request with the Host header given (fetch would set its own). */
function get(port: number, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers }, (res) => {
      let body = "";
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Waits for the page to catch up (up to 15 s: CI machines may be loaded); no fixed sleep. */
const poll = <T>(read: () => Promise<T> | T) =>
  expect.poll(read, { timeout: 15_000, interval: 50 });

const shot = async (name: string) => {
  if (screenshots) await page.screenshot({ path: join(screenshots, `explore-${name}.png`) });
};

beforeAll(async () => {
  const executablePath = chromiumPath();
  dir = await makeTempDir("ac-explore-");
  await writeFixtureSnapshot(join(dir, "new.jsonl"), { users: 240, variant: "new" });
  await writeFixtureSnapshot(join(dir, "old.jsonl"), { users: 240, variant: "old" });
  [explore, browser] = await Promise.all([
    startExplore([join(dir, "new.jsonl"), "--diff", join(dir, "old.jsonl"), "--port", "0"]),
    chromium.launch({ executablePath, args: ["--no-sandbox"] }),
  ]);
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    acceptDownloads: true,
  });
  page = await context.newPage();
});

afterAll(async () => {
  await browser?.close();
  await explore?.stop();
});

describe("explore: the review page in chromium", () => {
  it("refuses an API request without the bearer token, with a wrong one, with the token in a cookie, and one for another Host", async () => {
    const host = `127.0.0.1:${explore.port}`;
    const bearer = `Bearer ${explore.token}`;
    expect((await get(explore.port, "/api/summary", { host })).status).toBe(401);
    expect(
      (await get(explore.port, "/api/summary", { host, authorization: "Bearer wrong" })).status,
    ).toBe(401);
    const cookie = `explore_${explore.port}=${explore.token}`;
    expect((await get(explore.port, "/api/summary", { host, cookie })).status).toBe(401);
    expect((await get(explore.port, "/api/summary", { host, authorization: bearer })).status).toBe(
      200,
    );
    // A page elsewhere whose name was rebound to 127.0.0.1 sends its own name as Host.
    const rebound = await get(explore.port, "/", { host: `evil.example:${explore.port}` });
    expect(rebound.status).toBe(403);
    expect(
      (
        await get(explore.port, "/api/summary", {
          host: `evil.example:${explore.port}`,
          authorization: bearer,
        })
      ).status,
    ).toBe(403);
  });

  it("opens, searches, opens an account, shows the diff, keeps review decisions across a reload, exports them", async () => {
    await page.goto(explore.url);
    await poll(() => page.locator("table.grid tbody tr").count()).toBe(50);
    expect(page.url()).toBe(`http://127.0.0.1:${explore.port}/`);
    // The token left the address bar (and this history entry) for the origin's storage; no cookie.
    const tokenGone = async () => {
      expect(page.url()).not.toContain("token");
      expect(await page.evaluate("location.href")).not.toContain(explore.token);
      expect(await page.evaluate("document.cookie")).toBe("");
      expect(await page.context().cookies()).toEqual([]);
    };
    await tokenGone();
    await shot("accounts");

    await page.keyboard.press("/");
    await page.keyboard.type("ada.lovelace0@");
    await poll(() => page.locator("table.grid tbody tr").count()).toBe(1);
    await page.getByRole("link", { name: "Ada Lovelace" }).click();
    await page.getByRole("heading", { name: /Ada Lovelace/ }).waitFor();

    // Held directly, through team 0 (role 1 is granted to the team), added since the old sync,
    // and removed since it.
    const row = (grant: string) => page.locator(`tr[data-grant="${grant}"]`);
    await poll(() => row("role:r1:assigned:team:t0").textContent()).toContain(
      "through Team 0 Close",
    );
    expect(await row("role:r-new:assigned:user:u0").getAttribute("class")).toBe("row-added");
    expect(await row("team:t-gone:member:user:u0").getAttribute("class")).toBe("row-removed");

    const saved = () => page.waitForResponse((r) => r.url().endsWith("/api/review") && r.ok());
    await Promise.all([
      saved(),
      row("role:r-new:assigned:user:u0").getByRole("button", { name: "Revoke" }).click(),
    ]);
    const note = row("role:r-new:assigned:user:u0").getByLabel("Note");
    await note.fill("auditor role not requested");
    await Promise.all([saved(), note.press("Enter").then(() => note.blur())]);
    await Promise.all([
      saved(),
      row("team:t0:member:user:u0").getByRole("button", { name: "Keep" }).click(),
    ]);

    await page.reload();
    // The token survives the reload (kept by the page, not in the address).
    await tokenGone();
    await poll(() =>
      row("role:r-new:assigned:user:u0")
        .getByRole("button", { name: "Revoke" })
        .getAttribute("aria-pressed"),
    ).toBe("true");
    expect(await row("role:r-new:assigned:user:u0").getByLabel("Note").inputValue()).toBe(
      "auditor role not requested",
    );
    expect(
      await row("team:t0:member:user:u0")
        .getByRole("button", { name: "Keep" })
        .getAttribute("aria-pressed"),
    ).toBe("true");

    await shot("account");

    await page.getByRole("link", { name: /^Changes/ }).click();
    await poll(() => page.locator("tr.row-added").count()).toBeGreaterThan(0);
    await shot("changes");

    await page.getByRole("link", { name: /^Review/ }).click();
    await page.getByRole("button", { name: "Export CSV" }).waitFor();
    // Fetched with the token and saved from a Blob URL (the CSP lets the download through).
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export CSV" }).click(),
    ]);
    expect(download.url()).toMatch(/^blob:http:\/\/127\.0\.0\.1:\d+\//);
    expect(download.suggestedFilename()).toMatch(/^review-blackline-.+\.csv$/);
    const csv = await readFile((await download.path()) as string, "utf8");
    const lines = csv.trim().split("\r\n");
    expect(lines[0]).toMatch(
      /^grant_id,account_type,account_id,account,login,email,status,entitlement_id/,
    );
    expect(lines).toHaveLength(3);
    expect(csv).toContain("role:r-new:assigned:user:u0,user,u0,Ada Lovelace");
    expect(csv).toContain(",revoke,auditor role not requested,");
    expect(csv).toMatch(/team:t0:member:user:u0,.*,keep,,/);
    await shot("review");
    // The decisions are in the file beside the snapshot.
    const file = JSON.parse(await readFile(join(dir, "new.jsonl.review.json"), "utf8"));
    expect(Object.keys(file.decisions).sort()).toEqual([
      "role:r-new:assigned:user:u0",
      "team:t0:member:user:u0",
    ]);
  });

  it("gives another server on 127.0.0.1 nothing, and tells a page opened without the token how to open it", async () => {
    // Another local user's server on another port, opened in the same browser: the reported flaw
    // was that it received the cookie holding the token. It gets neither a cookie nor the token.
    const seen: IncomingHttpHeaders[] = [];
    const other = createServer((request, response) => {
      seen.push(request.headers);
      response.end("<!doctype html><title>another server</title>");
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const otherPort = (other.address() as AddressInfo).port;
    const tab = await page.context().newPage();
    try {
      await tab.goto(`http://127.0.0.1:${otherPort}/`);
      expect(seen.length).toBeGreaterThan(0);
      for (const headers of seen) {
        expect(headers.cookie).toBeUndefined();
        expect(headers.authorization).toBeUndefined();
        expect(JSON.stringify(headers)).not.toContain(explore.token);
      }
      // Its pages cannot read the review page's storage either (another port, another origin).
      expect(await tab.evaluate("localStorage.length")).toBe(0);

      // Another tab of the review page, opened from its bare address, shares the kept token.
      await tab.goto(`http://127.0.0.1:${explore.port}/#/accounts`);
      await poll(() => tab.locator("table.grid tbody tr").count()).toBe(50);
    } finally {
      await tab.close();
      other.close();
    }

    // A browser that never had the token: the bare address, then a wrong (or stale) token.
    const fresh = await browser.newContext();
    try {
      const bare = await fresh.newPage();
      await bare.goto(`http://127.0.0.1:${explore.port}/`);
      const alert = bare.getByRole("alert");
      await poll(() => alert.textContent()).toContain(
        "open the URL with the token that access-connectors explore printed",
      );
      expect(await bare.getByRole("heading").textContent()).toBe("This review page needs its key");
      // Pasted into the open tab: a change of fragment only, which the page takes (no reload).
      const sent = () => bare.waitForResponse((r) => r.url().endsWith("/api/summary"));
      const [refused] = await Promise.all([
        sent(),
        bare.goto(`http://127.0.0.1:${explore.port}/#token=wrong`),
      ]);
      expect(refused.status()).toBe(401);
      await poll(() => bare.getByRole("heading").textContent()).toBe(
        "This review page needs its key",
      );
      expect(bare.url()).toBe(`http://127.0.0.1:${explore.port}/`);
      // A refused token is forgotten.
      expect(await bare.evaluate("localStorage.length")).toBe(0);
      await bare.goto(explore.url);
      await poll(() => bare.locator("table.grid tbody tr").count()).toBe(50);
      expect(bare.url()).toBe(`http://127.0.0.1:${explore.port}/`);
    } finally {
      await fresh.close();
    }
  });

  it("shows entitlements and the risk views, and stops cleanly on SIGTERM", async () => {
    await page.getByRole("link", { name: /^Entitlements/ }).click();
    await page.getByLabel("Privileged").selectOption("yes");
    await poll(() => page.locator("table.grid tbody tr").count()).toBe(13);
    await shot("entitlements");
    await page.getByRole("link", { name: /^Risks/ }).click();
    await page.getByRole("link", { name: /Disabled, still holding access/ }).waitFor();
    await poll(() => page.locator("table.grid tbody tr").count()).toBeGreaterThan(0);
    const statuses = await page.locator("table.grid tbody td:nth-child(4)").allTextContents();
    expect(new Set(statuses)).toEqual(new Set(["disabled"]));
    await shot("risks");
    expect(await explore.stop()).toBe(0);
  });
});
