/** The console's entry: the stylesheet and the shell, mounted on `#root` (index.html). */
import { StrictMode } from "react"
import { createRoot } from "react-dom/client"
import { Shell } from "./app/Shell.tsx"
import "./styles/console.css"

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <Shell />
  </StrictMode>
)
