/** `npm start`: the server, configured from the environment (see README). */
import { NodeRuntime } from "@effect/platform-node"
import { runServer } from "./Server.ts"

NodeRuntime.runMain(runServer)
