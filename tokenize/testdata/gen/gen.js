// Writes ../counts.json: texts with their token counts under o200k_base and
// cl100k_base, computed by npm's tiktoken (the Rust core compiled to WASM),
// the reference custody's Go engine must match exactly.
//
//   cd tokenize/testdata/gen && npm install && node gen.js
//
// Texts are generated deterministically (a seeded PRNG), so a rerun writes
// the same file unless the reference changes.
"use strict";
const fs = require("fs");
const path = require("path");
const { get_encoding } = require("tiktoken");

let seed = 20261130;
function rnd() { // mulberry32
  seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (a) => a[Math.floor(rnd() * a.length)];

const fixed = [
  "", "a", " ", "  ", "\n", "\r\n", "\n\n\n", " \n ", "\t\t", "  \n  x", "Hello  world", "hello world",
  "Hello, World!", "The quick brown fox jumps over the lazy dog.",
  "I'm", "I'M", "DON'T", "don't", "You're", "YOU'RE", "we've", "WE'VE", "she'll", "SHE'LL", "he'd", "HE'D",
  "it's", "IT'S", "it'S", "'s", "'S", "'sx", "x'ſ", "x'ſx", "'ſx", "abc'ſt", "K'ſ", "'ll'll'", "''s", "'ſtop", "it'ſtop", "IT'ſOK", "word'ſword", "that'ſ", "THAT'ſ", "cat'ſ hat",
  "CamelCaseWord", "camelCaseWord", "HTTPServer", "XMLHttpRequest", "iPhone", "eBay", "McDonald's",
  "ALLCAPS SENTENCE HERE", "MiXeD cAsE tExT", "ǅungla", "ǅ'S", "ʰello", "aʰb", "Aʰ", "ʰA",
  "123", "1234567", "3.14159", "1,000,000", "12a34", "٣٤٥٦", "²³", "ⅫⅩ", "١٢٣٤٥",
  "a/b/c", "path/to/file.go", "https://example.com/a/b?c=d", "// comment\n", "/*\n * x\n */",
  "\u00e9t\u00e9", "e\u0301te\u0301", "a\u0301b", "\u0301", "\u0301\u0301x", "x \u0301", "Z\u0351\u036b\u0343\u036a\u0302\u036b",
  "中文测试", "日本語のテキストです。", "한국어 텍스트", "مرحبا بالعالم", "שלום עולם", "Привет, мир!", "ΑΒΓ αβγ",
  "हिन्दी पाठ", "ไทย", "😀", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷🇩🇪", "I ❤️ Go", "emoji😀text",
  "\u00a0\u00a0x", "\u3000中", "a\u2028b", "a\u0085b", "\u200b\u200bzero width", "\ufeffBOM", "\ufffd\ufffd",
  "tab\tseparated\tvalues", "trailing spaces   ", "   leading", "x   \n   y", "a\r\rb", "\n\n  \n",
  "{\"key\": \"value\", \"n\": [1, 2, 3]}", "<|endoftext|>", "<|im_start|>user", "func main() {\n\tfmt.Println(\"hi\")\n}\n",
  "a".repeat(1000), "ab".repeat(500), " ".repeat(1000), "\n".repeat(300), "😀".repeat(200), "1".repeat(999),
  "ſ".repeat(50), "'".repeat(100), "Ab".repeat(300), "中".repeat(400), "\u0301".repeat(100), ". ".repeat(300),
];

// Letters added in Unicode 15.1 and 16.0, which the reference counts as
// letters, and in 17.0, which it does not yet.
const newer = ["\u1C89", "\u1C8A", "\u{10D50}", "\u{10D70}", "\u{2EBF0}", "\u{1E5D0}", "\u{16D40}", "\u{11BC0}",
  "\u{1CCF0}", "\u{10940}", "\u{11DB0}", "\u{16EA0}", "\u{1E6C0}", "\u{323B0}"];
for (const ch of newer) fixed.push("a" + ch + "b", " " + ch + ch, "1" + ch + "2", ch + "'s", "A" + ch + "a");

const words = ["the", "of", "and", "token", "gateway", "integrity", "upstream", "The", "Custody", "model",
  "DON'T", "I'm", "they're", "it'll", "we'd", "naïve", "café", "Zürich", "straße", "ΣΊΣΥΦΟΣ", "Ωμέγα",
  "東京", "北京市", "カタカナ", "ひらがな", "العربية", "עברית", "ру́сский", "😀", "🚀", "x86_64", "v1.2.3",
  "foo_bar", "fooBar", "FooBar", "FOO_BAR", "42", "3.14", "1e-9", "0xff", "ǅ", "ʼn", "ﬁne", "Ⅳ", "①"];
const seps = [" ", " ", " ", "  ", ", ", ". ", "\n", "\n\n", "\t", " - ", "/", "'", "\"", ": ", "(", ")", "   \n", "\r\n", "!?"];

function prose(n) {
  let s = "";
  for (let i = 0; i < n; i++) s += pick(words) + pick(seps);
  return s;
}
function json(depth) {
  if (depth <= 0 || rnd() < 0.3) return pick(['"' + pick(words) + '"', String(Math.floor(rnd() * 1e6)), "true", "null", "-0.5"]);
  if (rnd() < 0.5) {
    const parts = []; for (let i = 0; i < 1 + rnd() * 4; i++) parts.push(json(depth - 1));
    return "[" + parts.join(", ") + "]";
  }
  const parts = []; for (let i = 0; i < 1 + rnd() * 4; i++) parts.push('"' + pick(words) + '": ' + json(depth - 1));
  return "{\n  " + parts.join(",\n  ") + "\n}";
}
function code() {
  const lines = [];
  for (let i = 0; i < 3 + rnd() * 10; i++) {
    const ind = "\t".repeat(Math.floor(rnd() * 3)) + (rnd() < 0.3 ? "    " : "");
    lines.push(ind + pick([
      "if err != nil {", "return fmt.Errorf(\"reading %s: %w\", name, err)", "}", "for i := 0; i < n; i++ {",
      "x := map[string]int{\"a\": 1}", "// TODO(someone): don't panic", "def f(x): return x ** 2  # square",
      "const re = /[a-z]+\\/\\d{2,3}/g;", "SELECT id, name FROM users WHERE id = 42;", "#include <stdio.h>",
      "    print(f\"{value!r:>10}\")", "let s = 'it''s';", "a && b || !c", "<div class=\"x\">Hi</div>"]));
  }
  return lines.join(pick(["\n", "\r\n", "\n\n"])) + (rnd() < 0.5 ? "\n" : "");
}
const chars = ["a", "Z", "'", "s", "T", "1", "٣", " ", "\t", "\n", "\r", "/", ".", "é", "\u0301", "ǅ", "ʰ", "中",
  "ا", "😀", "\u00a0", "\u3000", "ſ", "²", "-", "_", "\"", "ß", "İ", "ı", "É", "\u0308", "٣", "Ⅻ", "\u2028",
  "\u0085", "👍🏽", "K", "\u1C89", "\u{10D50}", "\u{2EBF0}", "\u{1CCF0}", "\u{10940}", "\ufffd", "\u200d", "ǈ", "ᾈ",
  "ͅ", "〆", "々", "ー", "ｱ", "①", "½", "l", "L", "m", "M", "d", "D", "r", "e", "v", "E"];
function soup(n) { let s = ""; for (let i = 0; i < n; i++) s += pick(chars); return s; }

const texts = [...fixed];
for (let i = 0; i < 80; i++) texts.push(prose(3 + Math.floor(rnd() * 40)));
for (let i = 0; i < 40; i++) texts.push(json(3));
for (let i = 0; i < 40; i++) texts.push(code());
for (let i = 0; i < 1500; i++) texts.push(soup(1 + Math.floor(rnd() * 40)));

const encs = { o200k_base: get_encoding("o200k_base"), cl100k_base: get_encoding("cl100k_base") };
const out = texts.map((text) => {
  const row = { text };
  for (const [name, enc] of Object.entries(encs)) row[name] = enc.encode_ordinary(text).length;
  return row;
});
for (const enc of Object.values(encs)) enc.free();
const file = path.join(__dirname, "..", "counts.json");
fs.writeFileSync(file, "[\n" + out.map((r) => JSON.stringify(r)).join(",\n") + "\n]\n");
console.log(`wrote ${out.length} texts to ${file}`);
