import { Parser } from "htmlparser2";
import { describe, expect, it } from "vitest";
import { excerpt, plainText, renderMarkdown } from "../../services/kit/rich-text/markdown.js";
import { userText } from "../../services/kit/handler/text.js";

/** OWASP XSS filter evasion cheat sheet style vectors, as a person could type them into any text field. */
const VECTORS = [
  `<script>alert(1)</script>`,
  `<SCRIPT SRC=https://xss.example/xss.js></SCRIPT>`,
  `<img src=x onerror=alert(1)>`,
  `<IMG SRC="javascript:alert('XSS');">`,
  `<svg onload=alert(1)>`,
  `<svg><script>alert(1)</script></svg>`,
  `<iframe src="https://evil.example"></iframe>`,
  `<style>body{background:url("javascript:alert(1)")}</style>`,
  `<a href="javascript:alert(1)">x</a>`,
  `<a href="&#106;avascript:alert(1)">x</a>`,
  `<a href="&#x6A;&#x61;&#x76;&#x61;script:alert(1)">x</a>`,
  `<a href="jav&#x09;ascript:alert(1)">x</a>`,
  `<a href=" JaVaScRiPt:alert(1)">x</a>`,
  `<body onload=alert(1)>`,
  `<div style="background-image: url(javascript:alert(1))">x</div>`,
  `<object data="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="></object>`,
  `<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
  `[x](javascript:alert(1))`,
  `[x](JAVASCRIPT:alert(1))`,
  `[x](javascript&#58;alert(1))`,
  `[x](  javascript:alert(1)  )`,
  `[x](vbscript:msgbox(1))`,
  `[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)`,
  `![x](javascript:alert(1))`,
  `![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)`,
  `[x](https://ok.example "a\\" onmouseover=\\"alert(1)")`,
  `<javascript:alert(1)>`,
  `<details open ontoggle=alert(1)>`,
  `<<SCRIPT>alert("XSS");//<</SCRIPT>`,
  "<div>\n\n<img src=x onerror=alert(1)>\n\n</div>",
  "```html\n<script>alert(1)</script>\n```",
];

/**
 * Parsed as a browser would (htmlparser2, entities decoded): no live script-bearing element, no event-handler
 * attribute, and every URL attribute http(s) or mailto. Text that merely shows a tag is inert.
 */
function assertInert(html: string): void {
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        expect(["script", "style", "iframe", "svg", "object", "embed", "math", "body", "details"]).not.toContain(name);
        for (const [attribute, value] of Object.entries(attributes)) {
          expect(attribute, html).not.toMatch(/^on/i);
          if (["href", "src", "cite", "action", "formaction", "data"].includes(attribute))
            expect(value.trim(), html).toMatch(/^(https?:|mailto:)/i);
          expect(attribute, html).not.toBe("style");
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
}

describe("renderMarkdown", () => {
  it.each(VECTORS)("renders %s inert", (vector) => {
    assertInert(renderMarkdown(vector));
    // Inside ordinary text, too.
    assertInert(renderMarkdown(`Hello **there**\n\n${vector}\n\n- item ${vector}`));
  });

  it("keeps what Markdown means: emphasis, lists, code, tables, safe links and images", () => {
    const html = renderMarkdown(
      "# Title\n\n*a* **b** `c`\n\n- one\n- two\n\n| x | y |\n|:-|-:|\n| 1 | 2 |\n\n[site](https://ok.example/a?b=1&c=2) ![pic](https://img.example/p.png)",
    );
    expect(html).toContain("<h1>Title</h1>");
    expect(html).toContain("<em>a</em> <strong>b</strong> <code>c</code>");
    expect(html).toContain("<li>one</li>");
    expect(html).toContain('<td style="text-align:right">2</td>');
    expect(html).toContain('<a href="https://ok.example/a?b=1&amp;c=2" rel="nofollow ugc noopener">site</a>');
    expect(html).toContain('<img src="https://img.example/p.png" alt="pic" />');
  });

  it("gives every link rel=nofollow ugc noopener, autolinks included, and shows raw HTML as text", () => {
    expect(renderMarkdown("see https://ok.example")).toContain('rel="nofollow ugc noopener"');
    expect(renderMarkdown("<b>bold</b>")).toBe("<p>&lt;b&gt;bold&lt;/b&gt;</p>\n");
  });
});

describe("plainText and excerpt", () => {
  it("answer the text without markup, entities decoded, blocks apart", () => {
    expect(plainText("# Hi\n\n**bold** & <b>tag</b>\n\n- a\n- b")).toBe("Hi bold & <b>tag</b> a b");
  });

  it("cut at a word with an ellipsis, never over the limit", () => {
    const text = excerpt("The quick brown fox jumps over the lazy dog", 20);
    expect(text).toBe("The quick brown fox…");
    expect(text.length).toBeLessThanOrEqual(20);
    expect(excerpt("short", 20)).toBe("short");
  });
});

describe("userText", () => {
  it("refuses blank and overlong text with 400 naming the field", () => {
    expect(() => userText("title", "  ", 10)).toThrow(/title is required/);
    expect(() => userText("title", "x".repeat(11), 10)).toThrow(/title holds at most 10/);
    expect(userText("body", "", 10, true)).toBe("");
  });
});
