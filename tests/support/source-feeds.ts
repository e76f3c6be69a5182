import type { FetchedEntry } from "../../services/sources/fetch/fetch-source.js";

/** One body of each source kind, and the entries it must give when fetched from `base` (relative links resolve against it). */
export interface Feed {
  type: string;
  body: string;
  entries(base: string): FetchedEntry[];
}

const rss: Feed = {
  type: "application/rss+xml; charset=utf-8",
  body: `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel><title>Example news</title><link>https://news.example/</link><description>News</description>
<item><title>First &amp; foremost</title><link>HTTPS://News.Example:443/a/1?x=1#comments</link>
  <guid isPermaLink="false">item-1</guid><description>&lt;p&gt;Summary one&lt;/p&gt;</description>
  <content:encoded><![CDATA[<p>Full   text
  one</p>]]></content:encoded><pubDate>Tue, 24 Nov 2026 09:30:00 GMT</pubDate>
  <category domain="ticker">aapl</category><category domain="form-type">8-k</category><category>Markets</category></item>
<item><title>Second</title><link>/relative/2</link></item>
<item><title>No link</title><guid isPermaLink="false">x-3</guid></item>
<item><title>Guid link</title><guid>https://news.example/g/4</guid><dc:date>2026-11-23T08:00:00Z</dc:date></item>
</channel></rss>`,
  entries: (base): FetchedEntry[] => [
    {
      canonicalUrl: "https://news.example/a/1?x=1",
      externalId: "item-1",
      title: "First & foremost",
      summary: "<p>Summary one</p>",
      content: "<p>Full text one</p>",
      publishedAt: new Date("2026-11-24T09:30:00Z"),
      identifiers: { ticker: "AAPL" },
      filingType: "8-K",
    },
    { canonicalUrl: `${base}/relative/2`, title: "Second", content: "Second", identifiers: {} },
    {
      canonicalUrl: "https://news.example/g/4",
      externalId: "https://news.example/g/4",
      title: "Guid link",
      content: "Guid link",
      publishedAt: new Date("2026-11-23T08:00:00Z"),
      identifiers: {},
    },
  ],
};

/** SEC EDGAR's Atom as it reads: a company filing (content with filing-type), a current-filings entry, and plain Atom. */
const atom: Feed = {
  type: "application/atom+xml",
  body: `<?xml version="1.0" encoding="ISO-8859-1" ?>
<feed xmlns="http://www.w3.org/2005/Atom">
<title>Filings</title><id>urn:tag:example</id><updated>2026-11-24T12:00:00-05:00</updated>
<entry>
  <category label="form type" scheme="https://www.sec.gov/" term="10-K" />
  <content type="text/xml">
    <accession-number>0000320193-26-000105</accession-number>
    <filing-date>2026-10-31</filing-date>
    <filing-type>10-K</filing-type>
    <form-name>Annual report</form-name>
  </content>
  <id>urn:tag:sec.gov,2008:accession-number=0000320193-26-000105</id>
  <link href="https://www.sec.gov/Archives/edgar/data/320193/000032019326000105/0000320193-26-000105-index.htm" rel="alternate" type="text/html" />
  <summary type="html"> &lt;b&gt;Filed:&lt;/b&gt; 2026-10-31</summary>
  <title>10-K  - Annual report</title>
  <updated>2026-10-31T06:01:14-04:00</updated>
</entry>
<entry>
  <title>8-K - MICROSOFT CORP (0000789019) (Filer)</title>
  <link rel="alternate" type="text/html" href="https://www.sec.gov/cgi-bin/browse-edgar?action=getcompany&amp;CIK=0000789019"/>
  <summary type="html">Current report</summary>
  <updated>2026-11-24T16:05:00-05:00</updated>
  <category scheme="https://www.sec.gov/" label="form type" term="8-K"/>
  <id>urn:tag:sec.gov,2008:accession-number=0000789019-26-000200</id>
</entry>
<entry>
  <title type="html">Plain &lt;i&gt;Atom&lt;/i&gt;</title>
  <link rel="self" href="https://elsewhere.example/self"/>
  <link href="/posts/plain"/>
  <id>tag:example,2026:plain</id>
  <published>2026-11-22T10:00:00Z</published>
  <category term="nvda" scheme="urn:ticker"/>
  <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Body</p> <p>text</p></div></content>
</entry>
<entry><title>No link</title><id>tag:none</id></entry>
</feed>`,
  entries: (base): FetchedEntry[] => [
    {
      canonicalUrl: "https://www.sec.gov/Archives/edgar/data/320193/000032019326000105/0000320193-26-000105-index.htm",
      externalId: "urn:tag:sec.gov,2008:accession-number=0000320193-26-000105",
      title: "10-K - Annual report",
      summary: "<b>Filed:</b> 2026-10-31",
      content: "0000320193-26-000105 2026-10-31 10-K Annual report",
      publishedAt: new Date("2026-10-31T10:01:14Z"),
      identifiers: { cik: "0000320193", accession_number: "0000320193-26-000105" },
      filingType: "10-K",
    },
    {
      canonicalUrl: "https://www.sec.gov/cgi-bin/browse-edgar?action=getcompany&CIK=0000789019",
      externalId: "urn:tag:sec.gov,2008:accession-number=0000789019-26-000200",
      title: "8-K - MICROSOFT CORP (0000789019) (Filer)",
      summary: "Current report",
      content: "Current report",
      publishedAt: new Date("2026-11-24T21:05:00Z"),
      identifiers: { cik: "0000789019" },
      filingType: "8-K",
    },
    {
      canonicalUrl: `${base}/posts/plain`,
      externalId: "tag:example,2026:plain",
      title: "Plain <i>Atom</i>",
      content: "Body text",
      publishedAt: new Date("2026-11-22T10:00:00Z"),
      identifiers: { ticker: "NVDA" },
    },
  ],
};

const jsonFeed: Feed = {
  type: "application/feed+json",
  body: JSON.stringify({
    version: "https://jsonfeed.org/version/1.1",
    title: "Blog",
    items: [
      {
        id: "1",
        url: "https://Blog.Example/p/1#top",
        title: "One",
        content_html: "<p>one</p>",
        summary: "s1",
        date_published: "2026-11-20T10:00:00Z",
        _ticker: "msft",
        _cik: "789019",
      },
      { id: "https://blog.example/p/2", title: "Two", content_text: "two" },
      { id: "3", title: "no url" },
    ],
  }),
  entries: (): FetchedEntry[] => [
    {
      canonicalUrl: "https://blog.example/p/1",
      externalId: "1",
      title: "One",
      summary: "s1",
      content: "<p>one</p>",
      publishedAt: new Date("2026-11-20T10:00:00Z"),
      identifiers: { ticker: "MSFT", cik: "0000789019" },
    },
    {
      canonicalUrl: "https://blog.example/p/2",
      externalId: "https://blog.example/p/2",
      title: "Two",
      content: "two",
      identifiers: {},
    },
  ],
};

const htmlPage: Feed = {
  type: "text/html; charset=utf-8",
  body: `<!doctype html><html><head><title>Quarterly results</title>
<meta name="description" content="Results  summary"><meta property="article:published_time" content="2026-11-21T07:00:00Z">
<link rel="canonical" href="/press/q3#x"><style>.a { color: red }</style><script>var x = 1;</script></head>
<body><h1>Heading</h1><p>Revenue   rose &amp; fell.</p><script>evil()</script><noscript>no script</noscript></body></html>`,
  entries: (base): FetchedEntry[] => [
    {
      canonicalUrl: `${base}/press/q3`,
      title: "Quarterly results",
      summary: "Results summary",
      content: "Heading Revenue rose & fell.",
      publishedAt: new Date("2026-11-21T07:00:00Z"),
      identifiers: {},
    },
  ],
};

const filing = {
  id: 17,
  url: "https://api.example/filings/17",
  title: "Filing 17",
  form: "10-q",
  cik: "320193",
  published_at: "2026-11-19T00:00:00Z",
};
const jsonApi: Feed = {
  type: "application/json",
  body: JSON.stringify({
    data: [
      filing,
      { id: "x", name: "no url" },
      { id: 18, link: "/filings/18", headline: "Eighteen", body: "text 18", symbol: "aapl" },
    ],
  }),
  entries: (base): FetchedEntry[] => [
    {
      canonicalUrl: "https://api.example/filings/17",
      externalId: "17",
      title: "Filing 17",
      content:
        '{"cik":"320193","form":"10-q","id":17,"published_at":"2026-11-19T00:00:00Z","title":"Filing 17","url":"https://api.example/filings/17"}',
      publishedAt: new Date("2026-11-19T00:00:00Z"),
      identifiers: { cik: "0000320193" },
      filingType: "10-Q",
    },
    {
      canonicalUrl: `${base}/filings/18`,
      externalId: "18",
      title: "Eighteen",
      content: "text 18",
      identifiers: { ticker: "AAPL" },
    },
  ],
};

export const FEEDS = { rss, atom, json_feed: jsonFeed, html_page: htmlPage, json_api: jsonApi };

/**
 * An RSS body with one entry of each kind a run leaves out, beside one it takes: a title of 600,000 characters (its
 * item event would pass the outbox's 512 KiB) and a summary over 5,000 characters. The run takes `kept` only.
 */
export const OVERSIZED = {
  type: "application/rss+xml",
  body: `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Oversized</title><link>https://big.example/</link><description>Big</description>
<item><title>${"T".repeat(600_000)}</title><link>https://big.example/title</link></item>
<item><title>Long summary</title><link>https://big.example/summary</link><description>${"s ".repeat(5_000)}</description></item>
<item><title>Kept</title><link>https://big.example/kept</link></item>
</channel></rss>`,
  kept: "https://big.example/kept",
  skipped: 2,
};
