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
  "nz", "co.nz", "org.nz", "net.nz", "ac.nz", "govt.nz",
  "br", "com.br", "net.br", "org.br",
  "in", "co.in", "net.in", "org.in", "firm.in", "gen.in", "ind.in",
  "cn", "com.cn", "net.cn", "org.cn",
  "mx", "com.mx", "org.mx",
  "za", "co.za", "org.za", "net.za",
  "kr", "co.kr", "or.kr", "ne.kr",
  "il", "co.il", "org.il", "net.il", "ac.il",
  "sg", "com.sg", "net.sg", "org.sg", "edu.sg",
  "tr", "com.tr", "net.tr", "org.tr",
  "id", "co.id", "or.id", "web.id", "my.id",
  "ar", "com.ar", "net.ar", "org.ar",
  "tw", "com.tw", "net.tw", "org.tw",
  "hk", "com.hk", "net.hk", "org.hk",
  "my", "com.my", "net.my", "org.my",
  "ph", "com.ph", "net.ph", "org.ph",
  "th", "co.th", "in.th", "or.th",
  "vn", "com.vn", "net.vn",
  "pk", "com.pk",
  "sa", "com.sa",
  "ae", "co.ae",
  "eg", "com.eg",
  "ng", "com.ng",
  "ke", "co.ke",
  "ua", "com.ua",
  "pe", "com.pe",
  "com.co",
  "cl", "ve", "com.ve",
  "uy", "com.uy",
  "ec", "com.ec",
  "de", "fr", "nl", "es", "com.es", "it", "eu", "ch", "at", "co.at", "or.at", "be", "se", "no", "dk", "fi", "pl", "com.pl",
  "ie", "pt", "com.pt", "gr", "com.gr", "cz", "hu", "ro", "us", "ca",
  // wildcards and an exception
  "*.ck", "!www.ck", "*.bd",
  // private suffixes that host shops and sites
  "myshopify.com", "github.io", "blogspot.com", "herokuapp.com",
];
