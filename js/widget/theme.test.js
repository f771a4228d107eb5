// The widget follows a colour scheme its host states (marimo), and the OS otherwise.
import { afterEach, describe, expect, it } from "vitest";
import aliases from "../fixtures/picture_aliases.json";
import { mount } from "./testing.js";

afterEach(() => {
  document.body.replaceChildren();
  document.body.className = "";
});

const nextMutation = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("followHostScheme", () => {
  it("leaves the scheme to the OS when the host states none", () => {
    const { el } = mount(aliases);
    expect(el.querySelector(".sw-root").dataset.swScheme).toBeUndefined();
  });

  it("takes the host's stated scheme, and follows a change of the page's theme", async () => {
    const el = document.createElement("div");
    el.style.colorScheme = "dark";
    document.body.appendChild(el);
    const { default: widget } = await import("./widget.js");
    const { fakeModel } = await import("./testing.js");
    const cleanup = widget.render({ model: fakeModel({ picture: aliases }), el });
    const root = el.querySelector(".sw-root");
    expect(root.dataset.swScheme).toBe("dark");
    el.style.colorScheme = "light";
    document.body.className = "light"; // what marimo does when its theme changes
    await nextMutation();
    expect(root.dataset.swScheme).toBe("light");
    el.style.colorScheme = "light dark"; // both: no stated preference
    document.body.className = "";
    await nextMutation();
    expect(root.dataset.swScheme).toBeUndefined();
    cleanup();
    el.style.colorScheme = "dark";
    document.body.className = "dark";
    await nextMutation();
    expect(root.dataset.swScheme).toBeUndefined(); // stopped observing after cleanup
  });
});
