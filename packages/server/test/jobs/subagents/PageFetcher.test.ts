/**
 * `fetch_url`'s transport against a local page server: the address policy
 * (after DNS resolution, on redirects too), the size and time limits, and
 * what kinds of content it reads. Live clock: real sockets.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { isPublicAddress } from "../../../src/jobs/subagents/research/AddressPolicy.ts"
import * as PageFetcher from "../../../src/jobs/subagents/research/PageFetcher.ts"
import type { PageFetcherOptions } from "../../../src/jobs/subagents/research/PageFetcher.ts"
import * as FakeWeb from "../../support/FakeWeb.ts"

const fetchWith = (options: PageFetcherOptions, url: string) =>
  PageFetcher.make(options).pipe(Effect.flatMap((fetcher) => fetcher.fetch(url)))

const refusal = (options: PageFetcherOptions, url: string) =>
  fetchWith(options, url).pipe(Effect.flip, Effect.map((e) => e.message))

/** The test's page server stands in for the public internet: the real policy, plus 127.0.0.1. */
const serverIsPublic = (address: string) => address === "127.0.0.1" || isPublicAddress(address)

describe("fetch_url address policy", () => {
  it("isPublicAddress: only public unicast addresses pass", () => {
    for (const address of ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "[2a00:1450:4001:80b::200e]"]) {
      assert.isTrue(isPublicAddress(address), address)
    }
    for (
      const address of [
        "127.0.0.1", "127.8.9.10", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
        "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1",
        "::ffff:127.0.0.1", "::ffff:7f00:1", "0:0:0:0:0:ffff:a00:1", "[::ffff:169.254.169.254]", "64:ff9b::7f00:1",
        "not-an-ip", ""
      ]
    ) assert.isFalse(isPublicAddress(address), address)
  })

  it.live("localhost is refused after resolution (the system resolver), and no request is sent", () =>
    Effect.gen(function*() {
      const web = yield* FakeWeb.scoped
      web.page("/", FakeWeb.html("home", "<p>hi</p>"))
      const message = yield* refusal({ allowPrivate: false }, `http://localhost:${web.port}/`)
      assert.match(message, /^refused: localhost resolves to (127\.0\.0\.1|::1), a private, loopback or link-local address$/)
      assert.deepStrictEqual(web.pageRequests(), [])
    }))

  it.live("a hostname resolving to a private address is refused at connect time", () =>
    Effect.gen(function*() {
      const web = yield* FakeWeb.scoped
      const resolve = () => Promise.resolve([{ address: "127.0.0.1", family: 4 }])
      const message = yield* refusal({ allowPrivate: false, resolve }, `http://docs.example.test:${web.port}/`)
      assert.strictEqual(message, "refused: docs.example.test resolves to 127.0.0.1, a private, loopback or link-local address")
      assert.deepStrictEqual(web.pageRequests(), [])
    }))

  it.live("a name with one private address among public ones is refused", () =>
    Effect.gen(function*() {
      const web = yield* FakeWeb.scoped
      const resolve = () => Promise.resolve([{ address: "93.184.216.34", family: 4 }, { address: "10.0.0.7", family: 4 }])
      const message = yield* refusal({ allowPrivate: false, resolve }, `http://mixed.test:${web.port}/`)
      assert.include(message, "resolves to 10.0.0.7")
    }))

  it.live("IP literals are checked too (they skip DNS)", () =>
    Effect.gen(function*() {
      const web = yield* FakeWeb.scoped
      for (const host of ["127.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "169.254.169.254"]) {
        const message = yield* refusal({ allowPrivate: false, timeoutMs: 2_000 }, `http://${host}:${web.port}/`)
        assert.match(message, /^refused: .* a private, loopback or link-local address$/, host)
      }
      assert.deepStrictEqual(web.pageRequests(), [])
    }))

  it.live("with FETCH_ALLOW_PRIVATE the page is fetched, through the socket's own lookup", () =>
    Effect.gen(function*() {
      const web = yield* FakeWeb.scoped
      web.page("/doc", FakeWeb.html("Doc", "<p>the text</p>"))
      const looked: Array<string> = []
      const resolve = (host: string) => {
        looked.push(host)
        return Promise.resolve([{ address: "127.0.0.1", family: 4 }])
      }
      const page = yield* fetchWith({ allowPrivate: true, resolve }, `http://docs.example.test:${web.port}/doc`)
      assert.deepStrictEqual(looked, ["docs.example.test"])
      assert.strictEqual(page.title, "Doc")
      assert.strictEqual(page.text, "the text")
    }))

  it.live("redirects are followed and each target re-checked: a redirect to a private address is refused", () =>
    Effect.gen(function*() {
      const web = yield* FakeWeb.scoped
      web.page("/start", FakeWeb.redirect("/middle"))
      web.page("/middle", FakeWeb.redirect(web.pageUrl("/end"), 301))
      web.page("/end", FakeWeb.html("End", "<p>arrived</p>"))
      web.page("/to-metadata", FakeWeb.redirect("http://169.254.169.254/latest/meta-data/"))
      web.page("/to-intranet", FakeWeb.redirect(`http://intranet.test:${web.port}/end`))
      web.page("/to-file", FakeWeb.redirect("file:///etc/passwd"))
      web.page("/loop", FakeWeb.redirect("/loop"))
      const resolve = (host: string) =>
        Promise.resolve([{ address: host === "intranet.test" ? "192.168.0.10" : "127.0.0.1", family: 4 }])
      const options: PageFetcherOptions = { allowPrivate: false, resolve, addressAllowed: serverIsPublic }

      const page = yield* fetchWith(options, web.pageUrl("/start"))
      assert.strictEqual(page.url, web.pageUrl("/end"))
      assert.strictEqual(page.requestedUrl, web.pageUrl("/start"))
      assert.strictEqual(page.text, "arrived")

      assert.strictEqual(
        yield* refusal(options, web.pageUrl("/to-metadata")),
        "refused: 169.254.169.254 resolves to 169.254.169.254, a private, loopback or link-local address"
      )
      assert.strictEqual(
        yield* refusal(options, web.pageUrl("/to-intranet")),
        "refused: intranet.test resolves to 192.168.0.10, a private, loopback or link-local address"
      )
      assert.strictEqual(
        yield* refusal(options, web.pageUrl("/to-file")),
        "refused: only http and https URLs can be fetched, not file:"
      )
      assert.strictEqual(yield* refusal(options, web.pageUrl("/loop")), "refused: more than 5 redirects")
      assert.notInclude(web.pageRequests(), "/latest/meta-data/")
    }))
})

describe("fetch_url limits and content", () => {
  const open: PageFetcherOptions = { allowPrivate: true }

  it.live("a page over the size limit is refused, whether it declares its length or not", () =>
    Effect.gen(function*() {
      const web = yield* FakeWeb.scoped
      const big = "x".repeat(PageFetcher.DEFAULT_MAX_BYTES + 1)
      web.page("/declared", { type: "text", status: 200, contentType: "text/plain", body: big })
      web.page("/chunked", {
        type: "chunked",
        status: 200,
        contentType: "text/plain",
        chunks: Array.from({ length: 40 }, () => "y".repeat(64 * 1024))
      })
      web.page("/fits", { type: "text", status: 200, contentType: "text/plain", body: "z".repeat(1024) })

      const limit = `is larger than the ${PageFetcher.DEFAULT_MAX_BYTES}-byte limit`
      assert.include(yield* refusal(open, web.pageUrl("/declared")), limit)
      assert.include(yield* refusal(open, web.pageUrl("/chunked")), limit)
      assert.strictEqual((yield* fetchWith(open, web.pageUrl("/fits"))).text.length, 1024)
    }))

  it.live("a page that does not answer in time is given up", () =>
    Effect.gen(function*() {
      const web = yield* FakeWeb.scoped
      web.page("/slow", FakeWeb.reply.hang())
      const message = yield* refusal({ ...open, timeoutMs: 300 }, web.pageUrl("/slow"))
      assert.strictEqual(message, `could not fetch ${web.pageUrl("/slow")}: no complete answer within 300 ms`)
    }))

  it.live("HTML is reduced to text off the event loop: a page built to be slow is given up, the server keeps running", () =>
    Effect.gen(function*() {
      const web = yield* FakeWeb.scoped
      web.page("/deep", FakeWeb.html("Deep", `${"<div>".repeat(5000)}deep${"</div>".repeat(5000)}`))
      web.page("/fine", FakeWeb.html("Fine", "<ul><li>one</li><li>two</li></ul><p>three</p>"))
      let ticks = 0
      const ticker = setInterval(() => ticks++, 20)
      const message = yield* refusal({ ...open, extractTimeoutMs: 1_000 }, web.pageUrl("/deep")).pipe(
        Effect.ensuring(Effect.sync(() => clearInterval(ticker)))
      )
      assert.strictEqual(message, `could not read ${web.pageUrl("/deep")}: reducing it to text took longer than 1000 ms`)
      assert.isAbove(ticks, 10, "timers kept firing while the page was being read")
      const page = yield* fetchWith(open, web.pageUrl("/fine"))
      assert.deepStrictEqual([page.title, page.text], ["Fine", "- one\n- two\nthree"])
    }))

  it.live("text is read as it is, binary content and error statuses are refused", () =>
    Effect.gen(function*() {
      const web = yield* FakeWeb.scoped
      web.page("/notes.txt", { type: "text", status: 200, contentType: "text/plain; charset=utf-8", body: "plain notes\n" })
      web.page("/data.json", FakeWeb.reply.json({ a: 1 }))
      web.page("/image.png", { type: "text", status: 200, contentType: "image/png", body: "\x89PNG" })
      web.page("/gone", FakeWeb.html("Gone", "<p>gone</p>", 410))

      assert.strictEqual((yield* fetchWith(open, web.pageUrl("/notes.txt"))).text, "plain notes")
      assert.strictEqual((yield* fetchWith(open, web.pageUrl("/data.json"))).text, `{"a":1}`)
      assert.strictEqual(
        yield* refusal(open, web.pageUrl("/image.png")),
        `refused: ${web.pageUrl("/image.png")} is image/png, not a text or HTML page`
      )
      assert.strictEqual(yield* refusal(open, web.pageUrl("/gone")), `${web.pageUrl("/gone")} answered HTTP 410`)
      assert.strictEqual(yield* refusal(open, "ftp://example.com/x"), "refused: only http and https URLs can be fetched, not ftp:")
      assert.strictEqual(yield* refusal(open, "not a url"), "not a URL: not a url")
    }))
})
