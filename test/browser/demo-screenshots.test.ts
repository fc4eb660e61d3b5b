// The demo's screenshots as a check (issue 43): scripts/demo-screenshots.ts shoots every page of
// the demo at 1280 and 390 px in Chromium, and this test holds what the shots must show: no page
// logged an error, the header is one line at either width, nothing is wider than a phone's window,
// and the account's sections are pages a person can take in (the one-column account page of nine
// cards was 2,350 px tall at 1280 px and 3,803 px at 390 px).
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type DemoScreenshots, takeDemoScreenshots } from "../../scripts/demo-screenshots.js";
import { launchChromium } from "./chromium.js";
import { describeInBrowser } from "./page.js";

describeInBrowser("the demo's screenshots at 1280 and 390 px", () => {
  let browser: Browser | undefined;
  let taken: DemoScreenshots;

  beforeAll(async () => {
    browser = await launchChromium();
    taken = await takeDemoScreenshots(browser);
  });

  afterAll(async () => {
    await browser?.close();
  });

  it("shoots every page at both widths, and no page logs an error", () => {
    const names = [...new Set(taken.shots.map((shot) => shot.name))];
    expect(names).toHaveLength(15);
    for (const name of names) {
      expect(taken.shots.filter((shot) => shot.name === name).map((shot) => shot.width)).toEqual([1280, 390]);
    }
    expect(taken.pageErrors).toEqual([]);
  });

  it("keeps the header on one line and nothing wider than the window, at either width", () => {
    for (const shot of taken.shots) {
      expect(shot.headerHeight, `${shot.name} at ${shot.width} px`).toBeLessThan(72);
      // The API reference is Swagger UI's own page: its tables scroll sideways on a phone.
      if (shot.name !== "13-api-reference") expect(shot.overflowX, `${shot.name} at ${shot.width} px`).toBe(0);
    }
  });

  it("shows the account as sections a person can take in: each under 1,400 px tall at 1280 px and 2,000 px at 390 px", () => {
    const sections = ["03-profile", "04-security-password-error", "05-sessions", "06-administration", "14-organizations"];
    for (const shot of taken.shots.filter((each) => sections.includes(each.name))) {
      expect(shot.pageHeight, `${shot.name} at ${shot.width} px`).toBeLessThan(shot.width === 1280 ? 1400 : 2000);
    }
  });
});
