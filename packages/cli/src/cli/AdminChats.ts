/** `switchboard admin chats …`: a user's chats, listed; a chat deleted (docs/users.md, operators). */
import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { withAdmin } from "./AdminClient.ts"

const chatUser = Flag.String("user").pipe(
  Flag.withDescription("The user whose chat it is (default: the user default)"),
  Flag.withMetavar("USER"),
  Flag.optional
)

const chatsDelete = Command.make("delete", {
  chatId: Argument.String("chatId").pipe(Argument.withDescription("The chat to delete")),
  user: chatUser
}, ({ chatId, user }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      yield* client.admin.deleteChat({ params: { chatId }, query: Option.isSome(user) ? { user: user.value } : {} })
      yield* Console.log(`deleted: ${chatId}`)
    })
  )).pipe(
    Command.withDescription(
      "Delete a chat: its transcript, its jobs (a running one is abandoned, no steer is delivered) and its markers."
    )
  )

const chatsList = Command.make("list", {
  user: Flag.String("user").pipe(Flag.withDescription("The user whose chats to list"), Flag.withMetavar("USER"))
}, ({ user }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const { chats } = yield* client.admin.listChats({ query: { user } })
      if (chats.length === 0) return yield* Console.log(`no chats for ${user}`)
      for (const chat of chats) yield* Console.log(`${chat.chatId}  ${chat.agent}  ${chat.updatedAt}  ${chat.title}`)
    })
  )).pipe(Command.withDescription("A user's chats, most recently updated first (the latest 50)."))

export const chats = Command.make("chats").pipe(
  Command.withDescription("List a user's chats; delete a chat."),
  Command.withSubcommands([chatsList, chatsDelete])
)
