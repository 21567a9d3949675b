/**
 * Listings that answer a page at a time (`nextAfter`, asked again as `after`): the decisions of a
 * task, the jobs of a chat. A client that wants the whole list asks for every page, one after the
 * other.
 */
import { Effect } from "effect"

/**
 * Every page of a listing, concatenated: `page(after)` asks for the one after `after` (the first:
 * `undefined`), `items` reads a page's rows.
 */
export const allPages = <P extends { readonly nextAfter?: string | undefined }, A, E, R>(
  page: (after: string | undefined) => Effect.Effect<P, E, R>,
  items: (page: P) => ReadonlyArray<A>
): Effect.Effect<Array<A>, E, R> =>
  Effect.gen(function*() {
    const all: Array<A> = []
    let after: string | undefined
    do {
      const answer = yield* page(after)
      all.push(...items(answer))
      after = answer.nextAfter
    } while (after !== undefined)
    return all
  })
