import { describe, expect, it } from "vitest";
import { launchChromium } from "./dashboard-browser";

describe("launchChromium", () => {
  it("without a browser, says how to get one", async () => {
    await expect(launchChromium("/nonexistent/chromium")).rejects.toThrow(
      "no Chromium at /nonexistent/chromium: install Debian's (sudo apt-get install chromium, or bash test/ensure-chromium.sh), or set CHROMIUM_PATH",
    );
  });
});
