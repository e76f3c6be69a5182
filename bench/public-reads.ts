import { runLoad, type Benchmark, type LoadSettings } from "./load.js";
import { startBenchPlatform, type BenchPlatform } from "./platform.js";

/** The heaviest feed a blog may have: 100 items (the item count's bound), each a 200,000-character body, full text. */
const FEED_POSTS = 100;
const POST_CHARS = 200_000;
/** The heaviest paste listing: a page of 200 (the paging bound), each paste 512 KiB (the default size bound). */
const PASTES = 200;
const PASTE_CHARS = 512 * 1024 - 1024;
const ABUSERS = 20;
const GOALS = { health: 50, post: 100 };
/**
 * The rate limits of anonymous reads are raised out of the way: every client here has one address, and the
 * figure wanted is what rendering costs, not how soon a limit refuses it.
 */
const UNLIMITED = "1000000000";

/**
 * `/healthz` and one blog post's read (anonymous, one connection each) while 20 anonymous connections fetch, in
 * turn, the heaviest blog feed and the heaviest paste listing the platform allows, against the same two reads on
 * a quiet platform. Issue 24: Markdown rendered on every read, on the one event loop, made the feed take 10–32 s
 * and `/healthz` 9.6 s. Goals: `/healthz` p99 < 50 ms, the post read p99 < 100 ms.
 */
export const publicReadsUnderAbuse: Benchmark = {
  name: "public reads under abuse",
  async run(settings: LoadSettings) {
    const bench = await startBenchPlatform({
      PF_BLOG_ANONYMOUS_READS_PER_MINUTE: UNLIMITED,
      PF_COMMUNITY_ANONYMOUS_READS_PER_MINUTE: UNLIMITED,
      PF_COMMUNITY_PASTES_PER_10_MINUTES: UNLIMITED,
    });
    try {
      const seeded = await seed(bench);
      const health = { url: `${bench.gatewayUrl}/healthz`, connections: 1 };
      const post = { url: `${bench.gatewayUrl}/blog/api/v1/posts/${seeded.post}`, connections: 1 };
      const rows = [
        await runLoad("/healthz, quiet", health, settings),
        await runLoad("post read, quiet", post, settings),
      ];
      const abuse = {
        url: bench.gatewayUrl,
        paths: [`/blog/feeds/${seeded.handle}/rss.xml`, `/community/api/pastes?owner=${seeded.owner}&limit=${PASTES}`],
        connections: ABUSERS,
      };
      const [abusive, healthMeanwhile, postMeanwhile] = await Promise.all([
        runLoad(`${ABUSERS} × feed of ${FEED_POSTS} + listing of ${PASTES}`, abuse, settings),
        runLoad("/healthz, meanwhile", health, settings),
        runLoad("post read, meanwhile", post, settings),
      ]);
      rows.push(abusive, healthMeanwhile, postMeanwhile);
      const verdict = (p99: number, goal: number) =>
        `p99 ${p99.toFixed(2)} ms (goal < ${goal} ms): ${p99 < goal ? "met" : "NOT met"}`;
      return {
        rows,
        notes: [
          `/healthz ${verdict(healthMeanwhile.p99, GOALS.health)}; post read ${verdict(postMeanwhile.p99, GOALS.post)}`,
          `feed ${(seeded.feedBytes / 1e6).toFixed(1)} MB; anonymous read limits raised (${bench.database})`,
        ],
      };
    } finally {
      await bench.stop();
    }
  },
};

/** The blog (its feed of 100 heavy posts, one ordinary post) and the 200 pastes of one owner. */
async function seed(bench: BenchPlatform) {
  const token = await bench.platform.mintToken({
    kind: "service",
    svc: "web",
    caps: [
      "blog.blog.create",
      "blog.blog.configure",
      "blog.post.create",
      "blog.post.publish",
      "community.paste.create",
    ],
  });
  const owner = `usr_bench${process.pid}`;
  const send = async (path: string, body: unknown, method = "POST") => {
    const answer = await fetch(`${bench.gatewayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "x-pf-subject": owner, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!answer.ok) throw new Error(`${path}: ${answer.status} ${await answer.text()}`);
    return (await answer.json()) as Record<string, { id: string }>;
  };
  const handle = `bench${process.pid}`;
  await send("/blog/api/v1/blogs", { handle, title: "Bench" });
  await send(`/blog/api/v1/blogs/${handle}`, { feed: { item_count: FEED_POSTS, full_text: true } }, "PATCH");
  const publish = async (title: string, body: string) => {
    const { post } = await send(`/blog/api/v1/blogs/${handle}/posts`, { title, summary: title, body });
    await send(`/blog/api/v1/posts/${post.id}/publish`, {});
    return post.id;
  };
  await inTurns(FEED_POSTS, (i) => publish(`Heavy ${i}`, heavy(i, POST_CHARS)));
  const post = await publish("Ordinary", heavy(-1, 5_000));
  const text = "0123456789abcdef ".repeat(Math.ceil(PASTE_CHARS / 17)).slice(0, PASTE_CHARS);
  await inTurns(PASTES, (i) => send("/community/api/pastes", { title: `Paste ${i}`, body: `${i} ${text}` }));
  const feed = await fetch(`${bench.gatewayUrl}/blog/feeds/${handle}/rss.xml`);
  return { handle, post, owner, feedBytes: (await feed.arrayBuffer()).byteLength };
}

/** Markdown of about `chars` characters, distinct per post: links, emphasis and code on every line. */
function heavy(n: number, chars: number): string {
  const line = (i: number) => `[post ${n} line ${i}](https://x.example/${n}/${i}) *em* **strong** \`code\``;
  return Array.from({ length: Math.ceil(chars / 50) }, (_, i) => line(i))
    .join("\n")
    .slice(0, chars);
}

/** Runs `count` seeding calls four at a time. */
async function inTurns(count: number, each: (i: number) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < count; start += 4)
    await Promise.all(Array.from({ length: Math.min(4, count - start) }, (_, i) => each(start + i)));
}
