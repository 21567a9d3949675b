/**
 * The console's pages: one entry a path pattern, with the realm whose token
 * its calls need and its title. The chat comes with the first load; the
 * operator's pages are each their own chunk (`React.lazy`), fetched when
 * opened. The server serves `index.html` for `/` and everything under
 * `/chats` and `/operator` (packages/server/src/http/WebConsole.ts): a new
 * page goes under one of them.
 */
import type { ComponentType } from "react"
import { lazy } from "react"
import type { Realm } from "../api/Session.ts"
import ChatPage from "../chat/ChatPage.tsx"
import type { PageProps } from "./Router.tsx"

export interface RouteDef {
  readonly path: string
  readonly realm: Realm
  readonly title: string
  readonly page: ComponentType<PageProps>
}

const HostsPage = lazy(() => import("../operator/HostsPage.tsx"))
const TasksPage = lazy(() => import("../operator/TasksPage.tsx"))
const ProfilesPage = lazy(() => import("../operator/ProfilesPage.tsx"))
const AgentsPage = lazy(() => import("../operator/AgentsPage.tsx"))
const TaskPage = lazy(() => import("../operator/TaskPage.tsx"))
const AgentPage = lazy(() => import("../operator/AgentPage.tsx"))
const UsagePage = lazy(() => import("../operator/UsagePage.tsx"))

export const ROUTES: ReadonlyArray<RouteDef> = [
  { path: "/", realm: "chat", title: "Chat", page: ChatPage },
  { path: "/chats/:chatId", realm: "chat", title: "Chat", page: ChatPage },
  { path: "/operator/hosts", realm: "admin", title: "Hosts", page: HostsPage },
  { path: "/operator/tasks", realm: "admin", title: "Tasks", page: TasksPage },
  { path: "/operator/tasks/:taskId", realm: "admin", title: "Task", page: TaskPage },
  { path: "/operator/profiles", realm: "admin", title: "Profiles", page: ProfilesPage },
  { path: "/operator/agents", realm: "admin", title: "Agents", page: AgentsPage },
  { path: "/operator/agents/:name", realm: "admin", title: "Agent", page: AgentPage },
  { path: "/operator/usage", realm: "admin", title: "Usage", page: UsagePage }
]

/** Paths that lead elsewhere. */
export const REDIRECTS: Readonly<Record<string, string>> = {
  "/chats": "/",
  "/operator": "/operator/hosts"
}

export interface NavItem {
  readonly to: string
  readonly label: string
}

/** The header's navigation: the chat, then the operator's pages. */
export const NAV: { readonly chat: NavItem; readonly operator: ReadonlyArray<NavItem> } = {
  chat: { to: "/", label: "Chat" },
  operator: [
    { to: "/operator/hosts", label: "Hosts" },
    { to: "/operator/tasks", label: "Tasks" },
    { to: "/operator/profiles", label: "Profiles" },
    { to: "/operator/agents", label: "Agents" },
    { to: "/operator/usage", label: "Usage" }
  ]
}
