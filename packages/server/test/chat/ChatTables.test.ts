/**
 * Chat's tables are chat's: every other feature reaches them through chat's SQL pieces
 * (`chat/TranscriptSql.ts`: the marker, a chat's life, agent and transcript) or its repository,
 * never by naming them in a statement of its own. The migrations, which make the tables, are the
 * one exception.
 */
import { assert, describe, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const SRC = fileURLToPath(new URL("../../src", import.meta.url))

const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : name.endsWith(".ts") ? [path] : []
  })

/** A statement naming one of chat's tables (what a comment says of them is not a statement). */
const NAMES_A_CHAT_TABLE = /\b(?:FROM|JOIN|INTO|UPDATE|DELETE FROM)\s+(?:chats|chat_messages|chat_turns|chat_activity|turn_chunks)\b/

describe("chat's tables", () => {
  it("are named in statements only by chat's own modules (and the migrations)", () => {
    const files = filesUnder(SRC)
    const found = files
      .map((file) => relative(SRC, file))
      .filter((path) => !path.startsWith("chat/") && !path.startsWith("db/migrations/"))
      .filter((path) => NAMES_A_CHAT_TABLE.test(readFileSync(join(SRC, path), "utf8")))
    assert.isAbove(files.length, 100)
    // The rule sees what it looks for: chat's own modules do name them.
    assert.isTrue(NAMES_A_CHAT_TABLE.test(readFileSync(join(SRC, "chat/ChatRepo.ts"), "utf8")))
    assert.deepStrictEqual(found, [])
  })
})
