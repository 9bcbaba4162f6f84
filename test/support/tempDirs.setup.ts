import { afterAll } from "vitest"
import { removeTempDirs } from "./tempDirs"

// Every test file: the folders it made with tempDir() go once it has run. Registered before the file's own
// hooks, so it runs after them (vitest runs after-hooks in reverse order).
afterAll(removeTempDirs)
