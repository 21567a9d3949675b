/**
 * Listings that answer a page at a time (`nextAfter`, asked again as `after`): the decisions of a
 * task, the jobs of a chat. A client that wants the whole list asks for every page, one after the
 * other.
 */
import { Effect } from "effect"

/**
 * Every page of a listing, concatenated: `page(cursor)` asks for the page `cursor` names (the first:
 * `{}`; then `{ after }`, to spread into the listing's query), `items` reads a page's rows.
 */
export const allPages = <P extends { readonly nextAfter?: string | undefined }, A, E, R>(
  page: (cursor: { readonly after?: string }) => Effect.Effect<P, E, R>,
  items: (page: P) => ReadonlyArray<A>
): Effect.Effect<Array<A>, E, R> =>
  Effect.gen(function*() {
    const all: Array<A> = []
    let after: string | undefined
    do {
      const answer = yield* page(after === undefined ? {} : { after })
      all.push(...items(answer))
      after = answer.nextAfter
    } while (after !== undefined)
    return all
  })
