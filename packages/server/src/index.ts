export { makeApp, makeServer, runServer } from "./Server.ts"
