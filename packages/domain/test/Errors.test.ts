/**
 * The one code→status table: every declared error is in `declaredErrors`,
 * answers with the status the table gives its code, and carries its name as
 * its tag (never on the wire).
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema, SchemaAST } from "effect"
import * as Errors from "../src/Errors.ts"

const isErrorClass = (value: unknown): value is Schema.Top & { readonly fields: Schema.Struct.Fields } =>
  typeof value === "function" && "fields" in value && "ast" in value

describe("error codes", () => {
  it("every declared error is listed, with the table's status for its code and its name as its tag", () => {
    const classes = Object.entries(Errors).flatMap(([name, value]) => isErrorClass(value) ? [[name, value] as const] : [])
    // The module's error classes (its own and those it re-exports) are exactly the list, each once.
    const byName = (a: { readonly name: string }, b: { readonly name: string }) => a.name.localeCompare(b.name)
    assert.deepStrictEqual(
      classes.map(([, value]) => value).sort(byName),
      ([...Errors.declaredErrors] as Array<{ readonly name: string }>).sort(byName) as Array<unknown>
    )
    assert.strictEqual(new Set(Errors.declaredErrors).size, Errors.declaredErrors.length)
    for (const [name, declared] of classes) {
      const code = (declared.fields["code"]!.ast as SchemaAST.Literal).literal as Errors.ErrorCode
      assert.strictEqual(SchemaAST.resolve(declared.ast)?.["httpApiStatus"], Errors.statusOfCode[code], name)
      assert.strictEqual(Errors.statusOf(code), Errors.statusOfCode[code], name)
    }
    const instance = new Errors.ChatNotFound({ error: "no chat c1", chatId: "c1" })
    assert.strictEqual(instance._tag, "ChatNotFound")
    assert.deepStrictEqual(Schema.encodeSync(Errors.ChatNotFound)(instance), { error: "no chat c1", code: "chat_not_found", chatId: "c1" })
    assert.strictEqual(JSON.stringify(instance), `{"error":"no chat c1","code":"chat_not_found","chatId":"c1"}`)
    assert.isUndefined(Errors.statusOf("toString"))
  })
})
