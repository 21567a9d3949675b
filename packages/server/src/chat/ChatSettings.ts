/**
 * The chat route's own settings (docs/configuration.md), apart from the
 * provider's (`ProviderSettings.ts`).
 */
import { Config } from "effect"
import { NON_NEGATIVE, POSITIVE, wholeNumber } from "../process/Accepts.ts"
import { positiveInt, setting } from "../process/Setting.ts"

/**
 * `CHAT_MAX_MESSAGES`: the most messages one turn may carry (default 1,000).
 * A client with a longer history sends only what the server has not stored
 * (the transcript is the conversation).
 */
export const MaxMessagesSetting = setting(
  { name: "CHAT_MAX_MESSAGES", expected: POSITIVE, accepts: wholeNumber(1) },
  (name) => positiveInt(name).pipe(Config.withDefault(1_000))
)

/**
 * The slack of a turn's marker beyond the provider call (storing the answer, the tool rounds'
 * writes); tests of a killed replica shorten it so that a dead turn's marker expires within the
 * test, and read it through their own ConfigProvider: an unreadable value there is the default.
 */
export const TurnMarkerGraceMsSetting = setting(
  { name: "TURN_MARKER_GRACE_MS", expected: NON_NEGATIVE, accepts: wholeNumber(0) },
  (name) => Config.Int(name).pipe(Config.withDefault(30_000), Config.orElse(() => Config.succeed(30_000)))
)

/**
 * `CHAT_TRANSCRIPT_MAX_MESSAGES` / `CHAT_TRANSCRIPT_MAX_BYTES`: a chat whose stored transcript
 * holds this many messages, or this many bytes of their JSON, takes no more client turns (409
 * `chat_full`). Every turn, `GET …/messages` and `/ui-messages` read the transcript whole: the
 * limit is what bounds them. Default 5,000 messages and 8 MiB (more than a model's context holds).
 */
export const TranscriptMaxMessagesSetting = setting(
  { name: "CHAT_TRANSCRIPT_MAX_MESSAGES", expected: POSITIVE, accepts: wholeNumber(1) },
  (name) => positiveInt(name).pipe(Config.withDefault(5_000))
)
export const TranscriptMaxBytesSetting = setting(
  { name: "CHAT_TRANSCRIPT_MAX_BYTES", expected: POSITIVE, accepts: wholeNumber(1) },
  (name) => positiveInt(name).pipe(Config.withDefault(8 * 1024 * 1024))
)

/** Both, as the turn's opening statement and the job tools check them. */
export const transcriptLimit = Config.all({ messages: TranscriptMaxMessagesSetting.config, bytes: TranscriptMaxBytesSetting.config })
