/**
 * The bundled subset of the Public Suffix List (publicsuffix.org), in its own
 * syntax: a plain rule (`co.uk`), a wildcard rule (`*.ck`: every label under
 * ck is a suffix) and an exception (`!www.ck`: except this one). TLDs missing
 * here still count as suffixes (the list's default rule `*`). A few private
 * suffixes are kept because shops live under them (one shop per subdomain).
 */
export const PUBLIC_SUFFIXES: readonly string[] = [
  // generic
  "com", "net", "org", "edu", "gov", "mil", "int", "info", "biz", "io", "co", "me", "app", "dev", "shop", "store",
  // countries, and their second levels that sell names
  "uk", "co.uk", "org.uk", "ac.uk", "gov.uk", "ltd.uk", "plc.uk", "me.uk", "net.uk", "sch.uk",
  "au", "com.au", "net.au", "org.au", "edu.au", "gov.au",
  "jp", "co.jp", "ne.jp", "or.jp", "ac.jp", "go.jp",
  "nz", "co.nz", "org.nz", "net.nz",
  "br", "com.br", "net.br",
  "in", "co.in", "net.in",
  "cn", "com.cn", "net.cn",
  "mx", "com.mx",
  "za", "co.za",
  "kr", "co.kr",
  "de", "fr", "nl", "es", "it", "eu", "ch", "at", "be", "se", "no", "dk", "fi", "pl", "ie", "pt", "us", "ca",
  // wildcards and an exception
  "*.ck", "!www.ck", "*.bd",
  // private suffixes that host shops and sites
  "myshopify.com", "github.io", "blogspot.com", "herokuapp.com",
];
