/**
 * Credentials at rest — provider profiles' API keys, agents' MCP server
 * headers: AES-256-GCM under `CREDENTIAL_KEY` (base64 of 32 random bytes), a
 * fresh 96-bit nonce per value, the owner's id as associated data (a sealed
 * key copied onto another profile's row, or another agent's, does not open), and beside the ciphertext the id of the key that sealed it: a
 * fingerprint, so a server holding `CREDENTIAL_KEY_PREVIOUS` knows which key
 * opens which value during a rotation.
 *
 * Read once at start. A missing key does not stop the server: sealing and
 * opening then fail with `credential_unavailable`, naming the variable to
 * fix; a malformed one stops `npm start` (`system/Settings.ts`). No key, and no plaintext credential, is ever logged or put
 * in an error.
 */
import { CredentialUnavailable } from "@switchboard/domain"
import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"
import { setting } from "../process/Setting.ts"

/** A sealed credential, as stored. */
export interface Sealed {
  readonly ciphertext: Uint8Array
  readonly nonce: Uint8Array
  readonly tag: Uint8Array
  readonly keyId: string
}

interface Key {
  readonly id: string
  readonly bytes: Buffer
}

/** What the configuration yields: a usable key, or why there is none (a sentence naming the variable). */
export type KeySlot = { readonly _tag: "Key"; readonly key: Key } | { readonly _tag: "Unavailable"; readonly reason: string }

/** The fingerprint of a key: not the key, and not reversible to it. */
export const keyIdOf = (bytes: Uint8Array): string =>
  createHash("sha256").update("switchboard credential key\u0000").update(bytes).digest("hex").slice(0, 16)

const STANDARD = /^[A-Za-z0-9+/]+={0,2}$/
const URL_SAFE = /^[A-Za-z0-9_-]+={0,2}$/

/** `raw` (the variable's value) as a 32-byte key, or why not. Never quotes the value. */
export const parseKey = (name: string, raw: string | undefined): KeySlot => {
  const value = raw?.trim() ?? ""
  if (value === "") {
    return { _tag: "Unavailable", reason: `${name} is not set (base64 of 32 random bytes)` }
  }
  if (!STANDARD.test(value) && !URL_SAFE.test(value)) {
    return { _tag: "Unavailable", reason: `${name} is malformed: not base64` }
  }
  const bytes = Buffer.from(value, STANDARD.test(value) ? "base64" : "base64url")
  if (bytes.length !== 32) {
    return { _tag: "Unavailable", reason: `${name} is malformed: it decodes to ${bytes.length} bytes, 32 are required` }
  }
  return { _tag: "Key", key: { id: keyIdOf(bytes), bytes } }
}

/** A refusal names the variable and says why ("it decodes to 12 bytes"), never the value. */
const keySetting = (name: string, expected: string) =>
  setting({
    name,
    expected,
    accepts: (value) => {
      const slot = parseKey(name, value)
      return slot._tag === "Key" ? true : { problem: slot.reason.replace(`${name} is `, "") }
    },
    blankIsUnset: true,
    secret: true
  }, (variable) => Config.option(Config.Redacted(variable)).pipe(Config.map(Option.map(Redacted.value)), Config.map(Option.getOrUndefined)))

export const CredentialKeySetting = keySetting("CREDENTIAL_KEY", "base64 of 32 random bytes, e.g. from: openssl rand -base64 32")
export const CredentialKeyPreviousSetting = keySetting("CREDENTIAL_KEY_PREVIOUS", "base64 of 32 bytes: the key before a rotation")

const ALGORITHM = "aes-256-gcm"

export const seal = (key: Key, profileId: string, plaintext: string): Sealed => {
  const nonce = randomBytes(12)
  const cipher = createCipheriv(ALGORITHM, key.bytes, nonce)
  cipher.setAAD(Buffer.from(profileId, "utf8"))
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
  return { ciphertext, nonce, tag: cipher.getAuthTag(), keyId: key.id }
}

/** The plaintext, or undefined when the value does not open with `key` (tampered, wrong profile, wrong key). */
export const open = (key: Key, profileId: string, sealed: Sealed): string | undefined => {
  try {
    const decipher = createDecipheriv(ALGORITHM, key.bytes, sealed.nonce)
    decipher.setAAD(Buffer.from(profileId, "utf8"))
    decipher.setAuthTag(sealed.tag)
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString("utf8")
  } catch {
    return undefined
  }
}

export class CredentialKeys extends Context.Service<CredentialKeys, {
  /** The current key's id; fails when CREDENTIAL_KEY is unusable. */
  readonly currentKeyId: Effect.Effect<string, CredentialUnavailable>
  /** Seals under the current key. */
  seal(profileId: string, plaintext: Redacted.Redacted<string>): Effect.Effect<Sealed, CredentialUnavailable>
  /** Opens with whichever held key sealed it (current or previous). */
  open(profileId: string, sealed: Sealed): Effect.Effect<Redacted.Redacted<string>, CredentialUnavailable>
  /** Opens with the key that sealed it and seals again under the current one; the same value when already current. */
  reseal(profileId: string, sealed: Sealed): Effect.Effect<Sealed, CredentialUnavailable>
}>()("switchboard/server/planner/CredentialKeys") {
  static readonly make = (current: KeySlot, previous: KeySlot | undefined) => {
    const unavailable = (reason: string) => new CredentialUnavailable({ error: `Credentials are unavailable: ${reason}` })
    const currentKey = current._tag === "Key" ? Effect.succeed(current.key) : Effect.fail(unavailable(current.reason))
    const keyFor = (keyId: string): Effect.Effect<Key, CredentialUnavailable> => {
      if (current._tag === "Key" && current.key.id === keyId) return Effect.succeed(current.key)
      if (previous?._tag === "Key" && previous.key.id === keyId) return Effect.succeed(previous.key)
      if (current._tag === "Unavailable") return Effect.fail(unavailable(current.reason))
      const why = previous === undefined
        ? "CREDENTIAL_KEY_PREVIOUS is not set"
        : previous._tag === "Unavailable" ? previous.reason : "CREDENTIAL_KEY_PREVIOUS is another key"
      return Effect.fail(unavailable(
        `the stored credential was encrypted under key ${keyId}, which is neither CREDENTIAL_KEY nor CREDENTIAL_KEY_PREVIOUS (${why})`
      ))
    }
    const openWith = (profileId: string, sealed: Sealed) =>
      Effect.flatMap(keyFor(sealed.keyId), (key) => {
        const plaintext = open(key, profileId, sealed)
        return plaintext === undefined
          ? Effect.fail(unavailable(`the stored credential of ${profileId.startsWith("agent ") ? profileId : `profile ${profileId}`} does not decrypt (altered, or sealed for another profile)`))
          : Effect.succeed(plaintext)
      })
    return CredentialKeys.of({
      currentKeyId: Effect.map(currentKey, (k) => k.id),
      seal: (profileId, plaintext) => Effect.map(currentKey, (key) => seal(key, profileId, Redacted.value(plaintext))),
      open: (profileId, sealed) => Effect.map(openWith(profileId, sealed), (p) => Redacted.make(p)),
      reseal: (profileId, sealed) =>
        Effect.flatMap(currentKey, (key) =>
          sealed.keyId === key.id
            ? Effect.succeed(sealed)
            : Effect.map(openWith(profileId, sealed), (plaintext) => seal(key, profileId, plaintext)))
    })
  }

  /** From `CREDENTIAL_KEY` and `CREDENTIAL_KEY_PREVIOUS`; never fails (an unusable key fails each use instead). */
  static readonly layer = Layer.effect(CredentialKeys, Effect.gen(function*() {
    const read = (key: typeof CredentialKeySetting) => key.config.pipe(Effect.orElseSucceed(() => undefined))
    const current = parseKey(CredentialKeySetting.name, yield* read(CredentialKeySetting))
    const previousRaw = yield* read(CredentialKeyPreviousSetting)
    const previous = previousRaw === undefined || previousRaw.trim() === ""
      ? undefined
      : parseKey(CredentialKeyPreviousSetting.name, previousRaw)
    if (current._tag === "Unavailable") {
      yield* Effect.logWarning(`${current.reason}: provider profiles cannot be created or used until it is set`)
    } else {
      yield* Effect.logInfo(`credential key ${current.key.id}${previous?._tag === "Key" ? `, previous key ${previous.key.id}` : ""}`)
    }
    if (previous?._tag === "Unavailable") yield* Effect.logWarning(`${previous.reason}: it is ignored`)
    return CredentialKeys.make(current, previous)
  }))
}
