/** The chat (`/`, `/chats/:chatId`): loaded with the shell, first. To come: a placeholder for now. */
import { Placeholder } from "../app/Placeholder.tsx"
import type { PageProps } from "../app/Routes.tsx"

export default function ChatPage(_props: PageProps) {
  return <Placeholder realm="chat" title="Chat" />
}
