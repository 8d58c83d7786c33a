import { describe, expect, it } from "vitest";
import type { ChatBody, CompletionsBody } from "../request/openai-schemas";
import { armKeyOf, KEY_CHARS } from "./arm-key";

const chat = (...messages: [string, string][]): ChatBody =>
  ({ model: "m", messages: messages.map(([role, content]) => ({ role, content })) }) as ChatBody;
const SYSTEM = "You are a helpful assistant.";

describe("armKeyOf", () => {
  it("keeps a conversation's key as its history grows", () => {
    const turn1 = chat(["system", SYSTEM], ["user", "Plan a trip to Lisbon."]);
    const turn3 = chat(
      ["system", SYSTEM],
      ["user", "Plan a trip to Lisbon."],
      ["assistant", "Day 1: Alfama."],
      ["user", "And day 2?"],
    );
    expect(armKeyOf("chat", turn3, "m", undefined, "conversation")).toBe(
      armKeyOf("chat", turn1, "m", undefined, "conversation"),
    );
  });

  it("tells conversations apart that share a system prompt, and tenants apart", () => {
    const keys = new Set<number>();
    for (let i = 0; i < 200; i++)
      keys.add(
        armKeyOf("chat", chat(["system", SYSTEM], ["user", `question ${i}`]), "m", undefined, "conversation"),
      );
    expect(keys.size).toBe(200);
    const body = chat(["user", "hi"]);
    expect(armKeyOf("chat", body, "m", "t1", "conversation")).not.toBe(
      armKeyOf("chat", body, "m", "t2", "conversation"),
    );
  });

  it("keys a whole tenant with AB_STICKY=tenant, and falls back to the conversation without one", () => {
    const a = chat(["user", "first"]);
    const b = chat(["user", "second"]);
    expect(armKeyOf("chat", a, "m", "t", "tenant")).toBe(armKeyOf("chat", b, "m", "t", "tenant"));
    expect(armKeyOf("chat", a, "m", undefined, "tenant")).toBe(
      armKeyOf("chat", a, "m", undefined, "conversation"),
    );
  });

  it("reads a bounded part of a huge message, and keys completions by their prompt's start", () => {
    const huge = "x".repeat(4_000_000);
    const k1 = armKeyOf("chat", chat(["user", `${huge}a`]), "m", undefined, "conversation");
    const k2 = armKeyOf("chat", chat(["user", `${huge}b`]), "m", undefined, "conversation");
    expect(k1).not.toBe(k2);
    const p = (prompt: CompletionsBody["prompt"]) => ({ model: "m", prompt }) as CompletionsBody;
    const start = "y".repeat(KEY_CHARS);
    expect(armKeyOf("completions", p(`${start} turn 1`), "m", undefined, "conversation")).toBe(
      armKeyOf("completions", p(`${start} turn 1 turn 2`), "m", undefined, "conversation"),
    );
    expect(armKeyOf("completions", p([[1, 2, 3]]), "m", undefined, "conversation")).toBe(
      armKeyOf("completions", p([1, 2, 3]), "m", undefined, "conversation"),
    );
  });
});
