import { startBenchPlatform } from "../platform.js";
const bench = await startBenchPlatform({ PF_BLOG_ANONYMOUS_READS_PER_MINUTE: "1000000000", PF_COMMUNITY_ANONYMOUS_READS_PER_MINUTE: "1000000000", PF_COMMUNITY_PASTES_PER_10_MINUTES: "1000000000" });
try {
  const token = await bench.platform.mintToken({ kind: "service", svc: "web", caps: ["blog.blog.create", "blog.post.create", "blog.post.publish", "community.paste.create"] });
  const owner = "usr_probe1";
  const send = async (path: string, body: unknown) => {
    const a = await fetch(`${bench.gatewayUrl}${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "x-pf-subject": owner, "content-type": "application/json" }, body: JSON.stringify(body) });
    if (!a.ok) throw new Error(`${path} ${a.status} ${await a.text()}`);
    return (await a.json()) as any;
  };
  await send("/blog/api/v1/blogs", { handle: "probe", title: "P" });
  const { post } = await send(`/blog/api/v1/blogs/probe/posts`, { title: "T", summary: "S", body: "hello *world* ".repeat(300) });
  await send(`/blog/api/v1/posts/${post.id}/publish`, {});
  const text = "x".repeat(500_000);
  for (let i = 0; i < 20; i++) await send("/community/api/pastes", { title: `P${i}`, body: text });
  const time = async (label: string, url: string, n: number) => {
    const cpu = process.cpuUsage(); const t = performance.now();
    for (let i = 0; i < n; i++) { const a = await fetch(url); await a.arrayBuffer(); if (!a.ok) throw new Error(String(a.status)); }
    const c = process.cpuUsage(cpu);
    console.log(label, ((performance.now() - t) / n).toFixed(2), "ms wall", ((c.user + c.system) / n / 1000).toFixed(2), "ms cpu (incl. client)");
  };
  await time("healthz", `${bench.gatewayUrl}/healthz`, 200);
  await time("post read", `${bench.gatewayUrl}/blog/api/v1/posts/${post.id}`, 200);
  await time("paste listing (20 x 500k)", `${bench.gatewayUrl}/community/api/pastes?owner=${owner}&limit=200`, 50);
  await time("feed", `${bench.gatewayUrl}/blog/feeds/probe/rss.xml`, 100);
} finally { await bench.stop(); }
