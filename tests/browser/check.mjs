// Renders every page of a rendered catalog in headless Chromium and checks it.
//
//   node check.mjs CATALOG_DIR SCREENSHOT_DIR
//
// For every `index.html` under CATALOG_DIR (the index and one per layout) and
// every `topology.svg`, at a desktop and a phone width:
// - no console error, page error or failed request;
// - every link resolves (a file that exists, or an element for `#id`);
//   `http(s)` links are only checked to be well formed (no network);
// - the topology picture: no two texts overlap (bounding boxes), every text
//   of a node stays inside its node's box, nothing leaves the canvas, and the
//   number of node boxes equals the layout's node count in `index.json`;
// - a screenshot is written to SCREENSHOT_DIR.
// Prints one line per problem and exits 1 if there is any.
//
// Driver: playwright-core (no bundled browser; Debian's chromium through
// `executablePath`), installed by scripts/test.sh with `npm ci`.

import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL, fileURLToPath } from "node:url";

const [root, shots] = process.argv.slice(2);
if (!root || !shots) {
  console.error("usage: node check.mjs CATALOG_DIR SCREENSHOT_DIR");
  process.exit(2);
}
const executablePath = process.env.PD_CHROMIUM || "/usr/bin/chromium";
if (!fs.existsSync(executablePath)) {
  console.error(`check.mjs: \`${executablePath}\` not found; install the \`chromium\` package (scripts/test.sh does)`);
  process.exit(2);
}
fs.mkdirSync(shots, { recursive: true });

const index = JSON.parse(fs.readFileSync(path.join(root, "index.json"), "utf8"));
const nodesOf = new Map(index.map((l) => [l.name, l.nodes]));

function walk(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.name === "index.html" || e.name === "topology.svg") out.push(p);
  }
  return out;
}
const files = walk(root);
const problems = [];
const problem = (file, width, msg) => problems.push(`${path.relative(root, file)} @${width}px: ${msg}`);

const widths = [
  { name: "desktop", width: 1280, height: 900 },
  { name: "phone", width: 390, height: 844 },
];

// `launch` starts Chromium with a fresh temporary `--user-data-dir` of its own
// and removes it on close.
const browser = await chromium.launch({
  executablePath,
  headless: true,
  // `headless: true` passes `--headless` itself.
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});

// Runs in the page: measures the topology picture.
function measure() {
  const svg = document.querySelector("svg.topology");
  if (!svg) return null;
  const canvas = svg.getBoundingClientRect();
  const texts = [...svg.querySelectorAll("text")].filter((t) => t.textContent.trim() !== "");
  const boxes = texts.map((t) => {
    const r = t.getBoundingClientRect();
    const node = t.closest("g.node, g.proxy-box");
    const rect = node ? node.querySelector("rect").getBoundingClientRect() : null;
    return { text: t.textContent, l: r.left, t: r.top, r: r.right, b: r.bottom, box: rect && { l: rect.left, t: rect.top, r: rect.right, b: rect.bottom } };
  });
  const out = [];
  const eps = 0.5;
  for (const a of boxes) {
    if (a.l < canvas.left - eps || a.r > canvas.right + eps || a.t < canvas.top - eps || a.b > canvas.bottom + eps) {
      out.push(`text "${a.text}" leaves the canvas`);
    }
    if (a.box && (a.l < a.box.l - eps || a.r > a.box.r + eps || a.t < a.box.t - eps || a.b > a.box.b + eps)) {
      out.push(`text "${a.text}" overflows its box`);
    }
  }
  // Sweep by top edge: pairs whose vertical extents intersect.
  const sorted = [...boxes].sort((x, y) => x.t - y.t);
  for (let i = 0; i < sorted.length; i++) {
    const a = sorted[i];
    for (let j = i + 1; j < sorted.length && sorted[j].t < a.b - eps; j++) {
      const b = sorted[j];
      const w = Math.min(a.r, b.r) - Math.max(a.l, b.l);
      const h = Math.min(a.b, b.b) - Math.max(a.t, b.t);
      if (w > eps && h > eps) out.push(`texts overlap: "${a.text}" and "${b.text}" (${w.toFixed(1)} x ${h.toFixed(1)} px)`);
    }
  }
  return {
    layout: svg.getAttribute("data-layout"),
    declared: Number(svg.getAttribute("data-nodes")),
    nodes: new Set([...svg.querySelectorAll("g.node")].map((g) => g.getAttribute("data-node"))).size,
    texts: boxes.length,
    problems: out,
  };
}

// Runs in the page: every link's target.
function links() {
  return [...document.querySelectorAll("a[href]")].map((a) => ({ raw: a.getAttribute("href"), abs: a.href }));
}

let pagesChecked = 0;
let svgsChecked = 0;
for (const file of files) {
  const url = pathToFileURL(file).href;
  for (const w of widths) {
    const context = await browser.newContext({ viewport: { width: w.width, height: w.height } });
    const page = await context.newPage();
    const errors = [];
    page.on("console", (m) => { if (m.type() === "error") errors.push(`console error: ${m.text()}`); });
    page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
    page.on("requestfailed", (r) => errors.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
    const resp = await page.goto(url, { waitUntil: "load" });
    if (!resp || !resp.ok()) errors.push(`cannot load (${resp ? resp.status() : "no response"})`);
    for (const e of errors) problem(file, w.width, e);

    for (const l of await page.evaluate(links)) {
      const u = new URL(l.abs);
      if (u.protocol === "http:" || u.protocol === "https:") continue;
      if (u.protocol !== "file:") { problem(file, w.width, `link \`${l.raw}\`: unexpected scheme ${u.protocol}`); continue; }
      const target = fileURLToPath(u);
      if (!fs.existsSync(target)) { problem(file, w.width, `broken link \`${l.raw}\` (${path.relative(root, target)} does not exist)`); continue; }
      if (u.hash && target === file) {
        const id = decodeURIComponent(u.hash.slice(1));
        if (!(await page.evaluate((i) => !!document.getElementById(i), id))) problem(file, w.width, `broken link \`${l.raw}\` (no element #${id})`);
      }
    }

    // The page itself never scrolls sideways: wide tables and the picture
    // scroll in their own boxes, long words (upstream paths) wrap.
    if (!file.endsWith(".svg")) {
      const wide = await page.evaluate(() => {
        const vw = document.documentElement.clientWidth;
        if (document.documentElement.scrollWidth <= vw) return null;
        // The innermost element whose content spills past its own box, or
        // past the viewport, outside any box that scrolls or clips it.
        const culprit = [...document.body.querySelectorAll("*")].filter((e) => {
          for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
            if (getComputedStyle(a).overflowX !== "visible") return false;
          }
          return e.getBoundingClientRect().right > vw + 1 || (getComputedStyle(e).overflowX === "visible" && e.scrollWidth > e.clientWidth + 1);
        }).pop();
        return { width: document.documentElement.scrollWidth, vw, culprit: culprit ? `<${culprit.tagName.toLowerCase()}> "${culprit.textContent.trim().slice(0, 80)}"` : "?" };
      });
      if (wide) problem(file, w.width, `the page is ${wide.width}px wide in a ${wide.vw}px viewport: ${wide.culprit} overflows`);
    }

    const m = await page.evaluate(measure);
    const isLayout = path.resolve(file) !== path.resolve(root, "index.html");
    if (isLayout) {
      if (!m) problem(file, w.width, "no topology picture");
      else {
        const want = nodesOf.get(m.layout);
        if (want === undefined) problem(file, w.width, `picture of unknown layout \`${m.layout}\``);
        else if (m.nodes !== want || m.declared !== want) problem(file, w.width, `picture shows ${m.nodes} node(s) (declares ${m.declared}), the layout has ${want}`);
        for (const p of m.problems) problem(file, w.width, p);
        svgsChecked += 1;
      }
    }
    if (!isLayout && w === widths[0]) {
      // The filters' state comes from the URL: `?max_nodes=1&q=…` shows
      // exactly the single-node layouts whose name or topology holds the text.
      const one = [...nodesOf.entries()].filter(([, n]) => n <= 1).map(([name]) => name);
      for (const [query, want] of [["?max_nodes=1", one.length], ["?q=zzz-no-such-layout", 0]]) {
        await page.goto(url + query, { waitUntil: "load" });
        const shown = await page.evaluate(() => [...document.querySelectorAll("tr[data-layout]")].filter((r) => !r.hidden).length);
        if (shown !== want) problem(file, w.width, `filter \`${query}\` shows ${shown} layout row(s), expected ${want}`);
      }
      await page.goto(url, { waitUntil: "load" });
    }
    const shot = path.relative(root, file).replaceAll(path.sep, "__").replace(/\.(html|svg)$/, "") + `.${w.name}.png`;
    // A standalone SVG document has no page to scroll (a full-page shot of
    // one never completes): shoot the viewport.
    await page.screenshot({ path: path.join(shots, shot), fullPage: !file.endsWith(".svg") });
    await context.close();
    pagesChecked += 1;
  }
}
await browser.close();

for (const p of problems) console.log(p);
console.log(`check.mjs: ${pagesChecked} page loads (${files.length} files x ${widths.length} widths), ${svgsChecked} pictures measured, ${problems.length} problem(s); screenshots in ${shots}`);
process.exit(problems.length ? 1 : 0);
